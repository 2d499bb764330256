-- boxoffice_claim_holds (migrations 0008, 0009), claiming most of a batch in one statement.
--
-- A batch on random seats is mostly holds of one seat, each by a different buyer on a
-- different seat. Such holds cannot affect one another: none counts against another's
-- limit, none can take another's seat. So they are claimed first, all at once, in one
-- subtransaction: one statement takes their buyers' locks (in the order of the keys), then
-- one statement claims their seats (in seat-id order) with the claim's own checks; its
-- snapshot, taken after every lock was granted, sees each buyer's committed holds. Every
-- other hold of the batch (a basket of several seats, a seat or a buyer that comes up
-- twice), and every hold that first claim left unclaimed or could not make (a lock wait
-- past 100 ms above all: it is then rolled back whole), is then claimed alone in the
-- batch's order by the same two statements, and told why it was not held if it is not.
-- So every hold is still judged as if asked alone after the holds before it; only holds
-- that cannot meet are judged at once. In pgbench, batches of 32 on random seats held
-- about 60% more a second than with 0009's function.
--
-- A hold claimed alone runs in one block rather than two nested ones: a refusal is
-- explained before its block is rolled back, with the buyer's lock still held, so it costs
-- one subtransaction, not two (and the explanation of each hold is its own: 0009 could
-- carry the previous hold's over to a partial claim). What each hold answers is 0008's:
-- 'held' (a row per seat), 'started', 'limit', 'unavailable' (a row per seat not held), or
-- 'retry' (nothing was claimed: claim it again alone).
--
-- p_baskets must be ascending (hold 1's seats, then hold 2's, ...), as the server sends it.
create or replace function boxoffice_claim_holds(
    p_events uuid[],
    p_tokens uuid[],
    p_users text[],
    p_ttls double precision[],
    p_maxes bigint[],
    p_baskets integer[],
    p_seats text[])
returns table (hold integer, outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language plpgsql volatile
as $$
#variable_conflict use_column
declare
    v_holds integer := coalesce(cardinality(p_tokens), 0);
    v_apart integer[];
    v_held boolean[] := array_fill(false, array[v_holds]);
    v_these integer[];
    v_asked integer;
    v_next integer := 1;
    v_basket text[];
    v_count bigint;
    v_tokens uuid[];
    v_seats text[];
    v_types text[];
    v_prices bigint[];
    v_created timestamptz[];
    v_expires timestamptz[];
    v_started boolean;
    v_live bigint;
begin
    if current_setting('transaction_isolation') <> 'read committed' then
        raise exception 'boxoffice_claim_holds needs READ COMMITTED, not %',
            current_setting('transaction_isolation');
    end if;
    perform set_config('synchronous_commit', 'off', true);
    perform set_config('lock_timeout', '100ms', true);

    -- The holds of one seat whose seat and buyer come up in no other hold of the batch.
    select coalesce(array_agg(b.hold), '{}')
      into v_apart
      from (select b.hold,
                   count(*) over (partition by b.hold) as seats,
                   count(*) over (partition by p_events[b.hold], b.seat_id) as asked,
                   count(*) over (partition by p_events[b.hold], p_users[b.hold]) as by_buyer
              from unnest(p_baskets, p_seats) as b(hold, seat_id)) b
     where b.seats = 1 and b.asked = 1 and b.by_buyer = 1;

    -- Step 0 claims those together (when there are two or more); step i claims hold i alone,
    -- unless step 0 held it.
    for step in 0 .. v_holds loop
        if step = 0 then
            continue when cardinality(v_apart) < 2;
            v_these := v_apart;
            v_asked := 1;
        else
            v_basket := '{}';
            while v_next <= cardinality(p_baskets) and p_baskets[v_next] = step loop
                v_basket := v_basket || p_seats[v_next];
                v_next := v_next + 1;
            end loop;
            continue when v_held[step];
            v_these := array[step];
            v_asked := cardinality(v_basket);
            hold := step;
        end if;
        v_started := false;
        v_live := 0;
        begin
            -- The buyers' locks, in the order of their keys, before the claim: its snapshot
            -- then sees every hold of theirs committed before.
            if step = 0 then
                perform pg_advisory_xact_lock(k.key)
                   from (select hashtextextended(
                                    'boxoffice.hold:' || p_events[h]::text || ':' || p_users[h],
                                    0) as key
                           from unnest(v_these) as h) k
                  order by k.key;
            else
                perform pg_advisory_xact_lock(hashtextextended(
                    'boxoffice.hold:' || p_events[step]::text || ':' || p_users[step], 0));
            end if;
            with want as (
                select p_events[b.hold] as event_id, p_tokens[b.hold] as token,
                       p_users[b.hold] as user_id, p_ttls[b.hold] as ttl,
                       p_maxes[b.hold] as most, b.seat_id
                  from unnest(p_baskets, p_seats) as b(hold, seat_id)
                 where b.hold = any(v_these)
            ), claimed as (
                insert into reservation
                       (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                        created_at, expires_at)
                select a.event_id, a.seat_id, want.token, want.user_id, 'H', a.ticket_type,
                       t.price_cents, now(), now() + make_interval(secs => want.ttl)
                  from want
                 cross join lateral (select * from seat_allocation s
                                      where s.event_id = want.event_id
                                        and s.seat_id = want.seat_id
                                      limit 1) a
                  join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
                  join event e on e.event_id = a.event_id
                 where e.starts_at > now()
                   and (select true from order_seat o
                         where o.event_id = a.event_id and o.seat_id = a.seat_id
                           and not o.released
                         limit 1) is null
                   and (select h.status = 'R' or h.expires_at > now() from reservation h
                         where h.event_id = a.event_id and h.seat_id = a.seat_id) is not true
                   and (select count(*) from (
                            select 1 from reservation r
                             where r.event_id = want.event_id and r.user_id = want.user_id
                               and r.status = 'H' and r.expires_at > now()
                             limit want.most) live) + v_asked <= want.most
                 order by a.seat_id
                   for share of a
                on conflict on constraint reservation_pkey do update
                   set hold_token = excluded.hold_token, user_id = excluded.user_id,
                       status = 'H', ticket_type = excluded.ticket_type,
                       price_cents = excluded.price_cents, created_at = excluded.created_at,
                       expires_at = excluded.expires_at
                 where reservation.status = 'H' and reservation.expires_at <= now()
                returning reservation.hold_token, reservation.seat_id, reservation.ticket_type,
                          reservation.price_cents, reservation.created_at,
                          reservation.expires_at)
            select count(*), array_agg(c.hold_token order by c.seat_id),
                   array_agg(c.seat_id order by c.seat_id),
                   array_agg(c.ticket_type order by c.seat_id),
                   array_agg(c.price_cents order by c.seat_id),
                   array_agg(c.created_at order by c.seat_id),
                   array_agg(c.expires_at order by c.seat_id)
              into v_count, v_tokens, v_seats, v_types, v_prices, v_created, v_expires
              from claimed c;
            if step > 0 and v_count < cardinality(v_basket) then
                -- Said before the block is rolled back, under the buyer's lock. A partial
                -- claim means some seats were taken; an empty one may also mean the event
                -- has started or the buyer is at the limit.
                if v_count = 0 then
                    select e.starts_at <= now(),
                           (select count(*) from (
                                select 1 from reservation r
                                 where r.event_id = p_events[step] and r.user_id = p_users[step]
                                   and r.status = 'H' and r.expires_at > now()
                                 limit p_maxes[step]) live)
                      into v_started, v_live
                      from event e where e.event_id = p_events[step];
                end if;
                raise exception using errcode = 'BX001';
            end if;
        exception
            when sqlstate 'BX001' then
                seat_id := null;
                ticket_type := null;
                price_cents := null;
                created_at := null;
                expires_at := null;
                if v_started is distinct from false then
                    outcome := 'started';
                    return next;
                elsif v_live + cardinality(v_basket) > p_maxes[step] then
                    outcome := 'limit';
                    return next;
                else
                    outcome := 'unavailable';
                    for k in 1 .. cardinality(v_basket) loop
                        if v_basket[k] <> all (coalesce(v_seats, '{}')) then
                            seat_id := v_basket[k];
                            return next;
                        end if;
                    end loop;
                end if;
                continue;
            when others then
                -- Step 0's holds are claimed one by one instead; hold i is left to retry.
                if step > 0 then
                    outcome := 'retry';
                    seat_id := null;
                    ticket_type := null;
                    price_cents := null;
                    created_at := null;
                    expires_at := null;
                    return next;
                end if;
                continue;
        end;
        outcome := 'held';
        for k in 1 .. v_count loop
            hold := array_position(p_tokens, v_tokens[k]);
            v_held[hold] := true;
            seat_id := v_seats[k];
            ticket_type := v_types[k];
            price_cents := v_prices[k];
            created_at := v_created[k];
            expires_at := v_expires[k];
            return next;
        end loop;
    end loop;
end;
$$;
