-- The claim rules, written once. Until now they stood in four places: the claim of one
-- hold (0007), the claim of a batch (0009, then 0010, whose header records a bug 0009 had),
-- and the fast refusal the postgres store sends for a contested seat (in Rust). Here:
--
-- * boxoffice_live_holds and boxoffice_seat_taken: the two rules every claim and refusal
--   asks, as SQL table functions that Postgres inlines where they stand in a FROM clause
--   (one STABLE SELECT each, pulled up into the query that uses it): a call costs what the
--   written-out subquery cost, and every look stays a primary-key lookup. (A scalar SQL
--   function with a subquery is never inlined: each call would run a plan of its own.)
-- * boxoffice_claim: how holds are claimed, for a batch or for one hold alone; 0010's
--   function with one flag. Claimed alone (p_alone), a hold waits on locks as long as the
--   session allows and an error is its own to raise; in a batch, a lock wait is cut at
--   100 ms and a hold that fails is answered 'retry'.
-- * boxoffice_claim_holds and boxoffice_claim_hold keep their signatures (the server and
--   tools call them) and are now calls of boxoffice_claim.
-- * boxoffice_hold_refusal: what a claim would answer a hold right now, changing nothing.
--
-- migrations/README.md names where each function in use is defined.

-- How many live holds `p_user` has in `p_event`, counted up to `p_most` (LIMIT: the count
-- stops once it has what any limit check needs). Over the partial index on live holds.
create function boxoffice_live_holds(p_event uuid, p_user text, p_most bigint)
returns table (live bigint)
language sql stable
as $$
    select (select count(*) from (
                select 1 from reservation r
                 where r.event_id = p_event and r.user_id = p_user and r.status = 'H'
                   and r.expires_at > now()
                 limit p_most) l)
$$;

-- Whether the seat is taken in the event: in a live order, reserved, or held by a hold
-- that has not expired. (Whether it is on sale at all is its allocation's business.) Each
-- look is a scalar subquery on a primary key, never a join, so no cached generic plan can
-- turn it into a scan of the event.
create function boxoffice_seat_taken(p_event uuid, p_seat text)
returns table (taken boolean)
language sql stable
as $$
    select (select true from order_seat o
             where o.event_id = p_event and o.seat_id = p_seat and not o.released
             limit 1) is not null
        or (select h.status = 'R' or h.expires_at > now() from reservation h
             where h.event_id = p_event and h.seat_id = p_seat) is true
$$;

-- Claims holds in the caller's (implicit) transaction. Holds: p_events, p_tokens, p_users,
-- p_ttls and p_maxes are per hold; p_baskets and p_seats list every seat of every hold,
-- each seat with the number (1-based) of its hold, ascending, each hold's seats in the
-- order to claim them.
--
-- 1. READ COMMITTED is required: the per-user count must see every hold of the buyer that
--    committed before the buyer's lock was granted, and each statement of a VOLATILE
--    function takes a fresh snapshot only under READ COMMITTED. Any other level raises.
-- 2. Asynchronous commit: a hold is ephemeral, so a crash may lose the last moments of
--    holds, never an order.
-- 3. Each hold takes its buyer's lock (pg_advisory_xact_lock on the one key recipe every
--    path that makes or extends holds of (event, user) takes) before its claim, and claims
--    its whole basket in one statement, inside a block: should the statement claim fewer
--    seats than asked, the answer says why (judged while the lock is held) and the block
--    is rolled back: all or nothing.
-- 4. In a batch, the holds of one seat whose seat and buyer come up in no other hold
--    cannot affect one another: they are claimed first, all at once, in one block (their
--    buyers' locks in key order, then one statement). Every other hold, and every hold that
--    first claim did not make, is then claimed alone in the batch's order. So each hold is
--    judged as if asked alone after the holds before it.
-- 5. In a batch (not p_alone), a lock wait is cut short (lock_timeout 100 ms for the
--    transaction): a batch waiting on another's seat or buyer would hold up every hold in
--    it, and two batches waiting on each other would wait for the deadlock detector. A
--    hold that fails for that or any other reason is rolled back alone and answered
--    'retry': the caller claims it again alone, once the batch has let go of its locks.
--
-- Why the claim statement is safe:
-- - The primary key (event_id, seat_id) turns the insert into an upsert, and the DO
--   UPDATE's WHERE takes a row over only if it is a hold that has expired. A live hold or
--   a reserved seat makes that seat's row come back empty. Concurrent claimers of one seat
--   queue on its row lock and re-check the WHERE against the committed row.
-- - Only allocated seats are selected, under a share lock, so a withdrawal cannot slip in
--   between; seats taken by this statement's snapshot (boxoffice_seat_taken) are left out
--   before the upsert, so refusing them takes no row lock.
-- - The per-user count runs in this statement's snapshot, taken after the lock.
-- - Nothing is claimed once the event has started, by the same clock.
-- - Seats are claimed in seat-id order, so overlapping baskets wait in one direction.
--
-- Rows answered, each headed by the hold's number: 'held' (a row per seat, with its ticket
-- type, price, creation and expiry), 'unavailable' (a row per seat not held), 'started',
-- 'limit', or (in a batch) 'retry'.
create function boxoffice_claim(
    p_events uuid[],
    p_tokens uuid[],
    p_users text[],
    p_ttls double precision[],
    p_maxes bigint[],
    p_baskets integer[],
    p_seats text[],
    p_alone boolean)
returns table (hold integer, outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language plpgsql volatile
as $$
#variable_conflict use_column
declare
    v_holds integer := coalesce(cardinality(p_tokens), 0);
    v_apart integer[] := '{}';
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
        raise exception 'boxoffice_claim needs READ COMMITTED, not %',
            current_setting('transaction_isolation');
    end if;
    perform set_config('synchronous_commit', 'off', true);
    if not p_alone then
        perform set_config('lock_timeout', '100ms', true);
        -- The holds of one seat whose seat and buyer come up in no other hold.
        select coalesce(array_agg(b.hold), '{}')
          into v_apart
          from (select b.hold,
                       count(*) over (partition by b.hold) as seats,
                       count(*) over (partition by p_events[b.hold], b.seat_id) as asked,
                       count(*) over (partition by p_events[b.hold], p_users[b.hold]) as by_buyer
                  from unnest(p_baskets, p_seats) as b(hold, seat_id)) b
         where b.seats = 1 and b.asked = 1 and b.by_buyer = 1;
    end if;

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
                 cross join lateral boxoffice_seat_taken(a.event_id, a.seat_id) st
                 cross join lateral boxoffice_live_holds(want.event_id, want.user_id,
                                                         want.most) lh
                 where e.starts_at > now()
                   and not st.taken
                   and lh.live + v_asked <= want.most
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
                    select e.starts_at <= now(), lh.live
                      into v_started, v_live
                      from event e,
                           boxoffice_live_holds(p_events[step], p_users[step], p_maxes[step]) lh
                     where e.event_id = p_events[step];
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
                -- Alone, the error is the hold's own. In a batch, step 0's holds are
                -- claimed one by one instead; hold i is left to retry alone.
                if p_alone then
                    raise;
                end if;
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

-- A batch of holds, as the postgres store's lanes send them: boxoffice_claim in a batch.
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
language sql volatile
as $$
    select * from boxoffice_claim(p_events, p_tokens, p_users, p_ttls, p_maxes, p_baskets,
                                  p_seats, false)
$$;

-- One hold claimed alone: boxoffice_claim with a batch of one, without its hold number.
create or replace function boxoffice_claim_hold(
    p_event uuid,
    p_token uuid,
    p_user text,
    p_ttl_seconds double precision,
    p_seats text[],
    p_max bigint)
returns table (outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language sql volatile
as $$
    select c.outcome, c.seat_id, c.ticket_type, c.price_cents, c.created_at, c.expires_at
      from boxoffice_claim(array[p_event], array[p_token], array[p_user],
                           array[p_ttl_seconds], array[p_max],
                           array_fill(1, array[cardinality(p_seats)]), p_seats, true) c
$$;

-- What a claim of `p_seats` by `p_user` would meet right now, by this statement's snapshot,
-- changing nothing: whether the event has started (null: no such event), the buyer's live
-- holds (up to p_most), and the seats that are not on sale or are taken.
create function boxoffice_hold_refusal(p_event uuid, p_user text, p_seats text[],
                                       p_most bigint)
returns table (started boolean, live bigint, taken text[])
language sql stable
as $$
    select e.starts_at <= now(), lh.live,
           array(select want.seat_id
                   from unnest(p_seats) as want(seat_id)
                  cross join lateral boxoffice_seat_taken(p_event, want.seat_id) st
                  where (select true from seat_allocation a
                          where a.event_id = p_event and a.seat_id = want.seat_id) is null
                     or st.taken)
      from event e, boxoffice_live_holds(p_event, p_user, p_most) lh
     where e.event_id = p_event
$$;
