-- Sales channels: seats sold through a partner, to that partner's buyers alone, until the
-- organizer releases them to general sale.
--
-- * event_channel: an event's channels (code, display name, order given).
-- * seat_allocation.channel: the channel a seat on sale is sold in; null for general sale.
--   Releasing a channel sets it to null on the channel's seats that are neither held nor
--   sold, in an allocation change (the event's layout_version is bumped with it).
-- * boxoffice_claim takes each hold's channel (p_channels: the buyer's, null for a buyer in
--   none) and claims a seat only if its allocation is on general sale or in that channel,
--   judged on the allocation row it already reads under a share lock: so an allocation
--   change (a release) and a claim never race, as before. Otherwise the function is 0012's,
--   unchanged; 0011 explains every rule.
-- * boxoffice_claim_holds and boxoffice_claim_hold take the channels too, and
--   boxoffice_hold_refusal takes the buyer's channel (a seat in another channel is one
--   the claim would refuse).

create table event_channel (
    event_id  uuid not null references event (event_id) on delete cascade,
    code      text not null,
    name      text not null,
    position  integer not null,
    primary key (event_id, code)
);

alter table seat_allocation add column channel text;
alter table seat_allocation add constraint seat_allocation_channel
    foreign key (event_id, channel) references event_channel (event_id, code);
create index seat_allocation_by_channel on seat_allocation (event_id, channel)
    where channel is not null;

drop function boxoffice_claim_holds(uuid[], uuid[], text[], double precision[], bigint[],
                                    uuid[], integer[], text[]);
drop function boxoffice_claim_hold(uuid, uuid, text, double precision, text[], bigint, uuid);
drop function boxoffice_claim(uuid[], uuid[], text[], double precision[], bigint[], uuid[],
                              integer[], text[], boolean);
drop function boxoffice_hold_refusal(uuid, text, text[], bigint);

-- Claims holds: 0012's boxoffice_claim, with each hold's channel (see the header).
create function boxoffice_claim(
    p_events uuid[],
    p_tokens uuid[],
    p_users text[],
    p_ttls double precision[],
    p_maxes bigint[],
    p_passes uuid[],
    p_channels text[],
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
    v_ended boolean;
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
        v_ended := false;
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
                       p_maxes[b.hold] as most, p_passes[b.hold] as pass,
                       p_channels[b.hold] as channel, b.seat_id
                  from unnest(p_baskets, p_seats) as b(hold, seat_id)
                 where b.hold = any(v_these)
            ), claimed as (
                insert into reservation
                       (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                        created_at, expires_at, pass_ticket)
                select a.event_id, a.seat_id, want.token, want.user_id, 'H', a.ticket_type,
                       t.price_cents, now(), now() + make_interval(secs => want.ttl), want.pass
                  from want
                 cross join lateral (select * from seat_allocation s
                                      where s.event_id = want.event_id
                                        and s.seat_id = want.seat_id
                                        and (s.channel is null
                                             or s.channel = want.channel)
                                      limit 1) a
                  join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
                  join event e on e.event_id = a.event_id
                 cross join lateral boxoffice_seat_taken(a.event_id, a.seat_id) st
                 cross join lateral boxoffice_live_holds(want.event_id, want.user_id,
                                                         want.most) lh
                 where e.starts_at > now()
                   and not st.taken
                   and lh.live + v_asked <= want.most
                   and not exists (select 1 from pass_ended pe
                                    where pe.event_id = want.event_id
                                      and pe.ticket = want.pass)
                 order by a.seat_id
                   for share of a
                on conflict on constraint reservation_pkey do update
                   set hold_token = excluded.hold_token, user_id = excluded.user_id,
                       status = 'H', ticket_type = excluded.ticket_type,
                       price_cents = excluded.price_cents, created_at = excluded.created_at,
                       expires_at = excluded.expires_at, pass_ticket = excluded.pass_ticket
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
                    select e.starts_at <= now(), lh.live,
                           exists (select 1 from pass_ended pe
                                    where pe.event_id = p_events[step]
                                      and pe.ticket = p_passes[step])
                      into v_started, v_live, v_ended
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
                elsif v_ended then
                    outcome := 'pass_ended';
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
create function boxoffice_claim_holds(
    p_events uuid[],
    p_tokens uuid[],
    p_users text[],
    p_ttls double precision[],
    p_maxes bigint[],
    p_passes uuid[],
    p_channels text[],
    p_baskets integer[],
    p_seats text[])
returns table (hold integer, outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language sql volatile
as $$
    select * from boxoffice_claim(p_events, p_tokens, p_users, p_ttls, p_maxes, p_passes,
                                  p_channels, p_baskets, p_seats, false)
$$;

-- One hold claimed alone: boxoffice_claim with a batch of one, without its hold number.
create function boxoffice_claim_hold(
    p_event uuid,
    p_token uuid,
    p_user text,
    p_ttl_seconds double precision,
    p_seats text[],
    p_max bigint,
    p_pass uuid,
    p_channel text)
returns table (outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language sql volatile
as $$
    select c.outcome, c.seat_id, c.ticket_type, c.price_cents, c.created_at, c.expires_at
      from boxoffice_claim(array[p_event], array[p_token], array[p_user],
                           array[p_ttl_seconds], array[p_max], array[p_pass],
                           array[p_channel], array_fill(1, array[cardinality(p_seats)]), p_seats, true) c
$$;

-- What a claim of `p_seats` by `p_user` in `p_channel` (null: none) would meet right now,
-- by this statement's snapshot, changing nothing: 0011's, with a seat allocated to another
-- channel counted as not on sale.
create function boxoffice_hold_refusal(p_event uuid, p_user text, p_seats text[],
                                       p_most bigint, p_channel text)
returns table (started boolean, live bigint, taken text[])
language sql stable
as $$
    select e.starts_at <= now(), lh.live,
           array(select want.seat_id
                   from unnest(p_seats) as want(seat_id)
                  cross join lateral boxoffice_seat_taken(p_event, want.seat_id) st
                  where (select true from seat_allocation a
                          where a.event_id = p_event and a.seat_id = want.seat_id
                            and (a.channel is null or a.channel = p_channel)) is null
                     or st.taken)
      from event e, boxoffice_live_holds(p_event, p_user, p_most) lh
     where e.event_id = p_event
$$;
