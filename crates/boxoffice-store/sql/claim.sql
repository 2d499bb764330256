-- The claim: every rule that decides whether a seat can be held, in one file, in force.
--
-- claim version 2
--
-- This file is not a migration. The migrations build the tables; this file defines the
-- functions that decide on them, and every server applies it, whole, right after the
-- migrations at every start (`pg::db::migrate`, in one transaction under an advisory
-- lock, each definition a `create or replace`). What is written here is what runs: a test
-- (`pg::db::tests`) checks that the functions in a migrated database are exactly these.
-- A change of rule is an edit of this file, with its version (above) one higher: the
-- database records the version in force and its checksum (table `claim_in_force`), a
-- server never applies an older version over a newer one (it refuses to start, saying
-- why), and `../claim_versions.txt` pins each version's text. A change of a function's
-- arguments or columns needs a migration that drops the old function first (`create or replace` cannot change a
-- signature), and then the new definition here. The migrations 0007 to 0017 hold earlier
-- versions of these functions for the installations that applied them; they are history.
--
-- Read top to bottom:
--
--   1. The questions every claim asks of one seat or one buyer: which is the buyer's lock,
--      is the seat on sale to this buyer's channel, is a hold lapsed (or live), is the seat
--      taken, how many live holds has the buyer.
--   2. boxoffice_claim, which claims holds, a batch of them or one alone, and says why not.
--      boxoffice_claim_holds (a batch, as the store's lanes send it) and
--      boxoffice_claim_hold (one hold alone; a hold that grows is claimed by it too) call it.
--      boxoffice_claim_season claims one seat basket in every event of a season at once.
--   3. boxoffice_waitlist_offer: seats free again offered to the waiting list, as holds.
--
-- The outcomes, spelled the same in SQL, in the redis store's scripts and in Rust
-- (`boxoffice_core::hold::AcquireOutcome`): 'held', 'unavailable' (with the seats not
-- held), 'started', 'limit', 'pass_ended', and, in a batch only, 'retry'.


-- 1. The questions.

-- Whether an allocation in `p_allocated` (its channel; null: general sale) is on sale to a
-- buyer in `p_channel` (null: a buyer in no channel). Inlined wherever it is called.
create or replace function boxoffice_on_sale_to(p_allocated text, p_channel text)
returns boolean
language sql immutable
as $$
    select p_allocated is null or p_allocated = p_channel
$$;

-- The key of the buyer's lock: the advisory lock every path that makes or extends holds of
-- (`p_event`, `p_user`) takes first (pg_advisory_xact_lock), so their counts of the
-- buyer's live holds never pass each other. `hashtextextended` of a namespaced string of
-- the event UUID's canonical text and the user id, seed 0: a collision only makes two
-- unrelated buyers take turns. The one recipe of the key; inlined wherever it is called.
create or replace function boxoffice_buyer_lock(p_event uuid, p_user text)
returns bigint
language sql immutable
as $$
    select hashtextextended('boxoffice.hold:' || p_event::text || ':' || p_user, 0)
$$;

-- Whether a reservation row in `p_status` ('H' held, 'R' reserved by an order) with
-- `p_expires_at` is a hold that has lapsed: the only row a claim may take over. Judged by
-- Postgres' clock, as every expiry is. Inlined wherever it is called.
create or replace function boxoffice_lapsed(p_status char, p_expires_at timestamptz)
returns boolean
language sql stable
as $$
    select p_status = 'H' and p_expires_at <= now()
$$;

-- Whether a reservation row in `p_status` with `p_expires_at` is a live hold: held, and
-- not lapsed by Postgres' clock. The one spelling of a live hold, in the claim and in
-- every statement of the postgres store that reads or acts on one (inlined, so the partial
-- index on held rows still serves it).
create or replace function boxoffice_live_hold(p_status char, p_expires_at timestamptz)
returns boolean
language sql stable
as $$
    select p_status = 'H' and p_expires_at > now()
$$;

-- How many live holds `p_user` has in `p_event`, counted up to `p_most` (LIMIT: the count
-- stops once it has what any limit check needs). Over the partial index on live holds. A
-- table function in a FROM clause, so Postgres inlines it (one STABLE SELECT, pulled up
-- into the query that uses it); a scalar SQL function with a subquery never is.
create or replace function boxoffice_live_holds(p_event uuid, p_user text, p_most bigint)
returns table (live bigint)
language sql stable
as $$
    select (select count(*) from (
                select 1 from reservation r
                 where r.event_id = p_event and r.user_id = p_user and boxoffice_live_hold(r.status, r.expires_at)
                 limit p_most) l)
$$;

-- Whether the seat is taken in the event: in a live order (unless its buyer lists it for
-- resale: then it is free to hold, and the order that buys it takes it from theirs),
-- reserved, or held by a hold that has not lapsed. (Whether it is on sale at all is its
-- allocation's business.) Each look is a scalar subquery on a primary key, never a join,
-- so no cached generic plan can turn it into a scan of the event; the listing is looked
-- up only for a seat sold. Inlined like boxoffice_live_holds.
create or replace function boxoffice_seat_taken(p_event uuid, p_seat text)
returns table (taken boolean)
language sql stable
as $$
    select (select true from order_seat o
             where o.event_id = p_event and o.seat_id = p_seat and not o.released
               and not exists (select 1 from resale_listing l
                                where l.event_id = p_event and l.seat_id = p_seat)
             limit 1) is not null
        or (select not boxoffice_lapsed(h.status, h.expires_at) from reservation h
             where h.event_id = p_event and h.seat_id = p_seat) is true
$$;


-- 2. The claim.
--
-- Claims holds in the caller's (implicit) transaction. Holds: p_events, p_tokens, p_users,
-- p_ttls, p_maxes (the buyer's most live held seats), p_passes (the waiting-room ticket
-- the hold is made under; null without one) and p_channels (the buyer's channel; null for
-- a buyer in none) are per hold; p_baskets and p_seats list every seat of every hold, each
-- seat with the number (1-based) of its hold, ascending, each hold's seats in the order to
-- claim them. p_alone: one hold claimed alone, rather than a batch.
--
-- How:
-- 1. READ COMMITTED is required: the per-user count must see every hold of the buyer that
--    committed before the buyer's lock was granted, and each statement of a VOLATILE
--    function takes a fresh snapshot only under READ COMMITTED. Any other level raises.
-- 2. Asynchronous commit: a hold is ephemeral, so a crash may lose the last moments of
--    holds, never an order.
-- 3. Each hold takes its buyer's lock (pg_advisory_xact_lock on boxoffice_buyer_lock, the
--    key every path that makes or extends holds of (event, user) takes) before its
--    claim, and claims its whole basket in one statement, inside a block: should the
--    statement claim fewer seats than asked, the answer says why (judged while the lock is
--    held) and the block is rolled back: all or nothing.
-- 4. In a batch, the holds whose seats and buyer come up in no other hold cannot affect
--    one another: they are claimed first, all at once, in one block (their buyers' locks
--    in key order, then one statement). Should that statement give a hold some of its seats
--    and not all, the block is rolled back whole. Every other hold, and every hold that
--    first claim did not make, is then claimed alone in the batch's order. So each hold is
--    judged as if asked alone after the holds before it.
-- 5. In a batch, a lock wait is cut short (lock_timeout 100 ms for the transaction): a
--    batch waiting on another's seat or buyer would hold up every hold in it, and two
--    batches waiting on each other would wait for the deadlock detector. A hold that fails
--    for that or any other reason is rolled back alone and answered 'retry': the caller
--    claims it again alone, once the batch has let go of its locks. Alone, the error is
--    the hold's own to raise.
--
-- The rules of the claim statement, each kept by the statement itself:
-- - A seat is claimed only if it is allocated and on sale to the buyer's channel
--   (boxoffice_on_sale_to), read under a share lock on its allocation row, so an
--   allocation change (a withdrawal, a channel released) never slips in between.
-- - Not a seat taken by this statement's snapshot (boxoffice_seat_taken): left out before
--   the upsert, so refusing it takes no row lock.
-- - The primary key (event_id, seat_id) turns the insert into an upsert, and the DO
--   UPDATE's WHERE takes a row over only if it is a lapsed hold (boxoffice_lapsed). A live
--   hold or a reserved seat makes that seat's row come back empty. Concurrent claimers of
--   one seat queue on its row lock and re-check the WHERE against the committed row.
-- - The buyer's live held seats (boxoffice_live_holds), counted in this statement's
--   snapshot (taken after the buyer's lock), plus the seats asked, stay within p_maxes.
-- - Nothing is claimed once the event has started, by the same clock.
-- - Nothing is claimed under a waiting-room pass that has ended (pass_ended): one
--   primary-key probe in the snapshot that also counts the buyer's live holds, so a claim
--   either sees the checkout that ended the pass or sees that checkout's seats still held
--   and counts them: the seats held and bought under one pass never exceed the limit.
-- - Seats are claimed in seat-id order, so overlapping baskets wait in one direction.
--
-- Rows answered, each headed by the hold's number: 'held' (a row per seat, with its ticket
-- type, price, creation and expiry), 'unavailable' (a row per seat not held), 'started',
-- 'limit', 'pass_ended', or (in a batch) 'retry'.
create or replace function boxoffice_claim(
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
        -- The holds whose seats and buyer come up in no other hold.
        with by_hold as (
            select h.hold::integer as hold,
                   count(*) over (partition by h.event_id, h.user_id) as by_buyer
              from unnest(p_events, p_users) with ordinality as h(event_id, user_id, hold)
        ), by_seat as (
            select b.hold,
                   count(*) over (partition by p_events[b.hold], b.seat_id) as asked
              from unnest(p_baskets, p_seats) as b(hold, seat_id)
        )
        select coalesce(array_agg(h.hold order by h.hold), '{}')
          into v_apart
          from by_hold h
         where h.by_buyer = 1
           and exists (select 1 from by_seat s where s.hold = h.hold)
           and not exists (select 1 from by_seat s where s.hold = h.hold and s.asked > 1);
    end if;

    -- Step 0 claims those together (when there are two or more); step i claims hold i alone,
    -- unless step 0 held it.
    for step in 0 .. v_holds loop
        if step = 0 then
            continue when cardinality(v_apart) < 2;
            v_these := v_apart;
        else
            v_basket := '{}';
            while v_next <= cardinality(p_baskets) and p_baskets[v_next] = step loop
                v_basket := v_basket || p_seats[v_next];
                v_next := v_next + 1;
            end loop;
            continue when v_held[step];
            v_these := array[step];
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
                   from (select boxoffice_buyer_lock(p_events[h], p_users[h]) as key
                           from unnest(v_these) as h) k
                  order by k.key;
            else
                perform pg_advisory_xact_lock(boxoffice_buyer_lock(p_events[step], p_users[step]));
            end if;
            with want as (
                select p_events[b.hold] as event_id, p_tokens[b.hold] as token,
                       p_users[b.hold] as user_id, p_ttls[b.hold] as ttl,
                       p_maxes[b.hold] as most, p_passes[b.hold] as pass,
                       p_channels[b.hold] as channel, b.seat_id,
                       count(*) over (partition by b.hold) as asked
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
                                        and boxoffice_on_sale_to(s.channel, want.channel)
                                      limit 1) a
                  join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
                  join event e on e.event_id = a.event_id
                 cross join lateral boxoffice_seat_taken(a.event_id, a.seat_id) st
                 cross join lateral boxoffice_live_holds(want.event_id, want.user_id,
                                                         want.most) lh
                 where e.starts_at > now()
                   and not st.taken
                   and lh.live + want.asked <= want.most
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
                 where boxoffice_lapsed(reservation.status, reservation.expires_at)
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
            if step = 0 and exists (
                   select 1
                     from (select b.hold, count(*) as asked
                             from unnest(p_baskets) as b(hold)
                            where b.hold = any(v_these)
                            group by b.hold) a
                     join (select array_position(p_tokens, t) as hold, count(*) as got
                             from unnest(v_tokens) as t
                            group by t) c on c.hold = a.hold
                    where c.got < a.asked) then
                -- A hold given some of its seats and not all: the first step is rolled back
                -- whole and each of its holds claimed alone.
                raise exception using errcode = 'BX002';
            end if;
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
                -- claimed one by one instead (so too after BX002, a hold given only some
                -- of its seats); hold i is left to retry alone.
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
create or replace function boxoffice_claim_hold(
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


-- 2b. A season's claim.
--
-- Claims the seats `p_seats` for `p_user` in every event of `p_events` at once, all or
-- nothing, in the caller's (implicit) transaction: each event's rows under that event's
-- token (`p_tokens`, one per event, as the server derives them from the season hold's
-- token), as holds of the season's ticket types and prices (`p_partial`'s price where it
-- sets one). Each (event, seat) is judged by the rules of an event's claim: allocated to
-- the season (the season's allocations, not the event's: where an event sells the same
-- seat on its own, the first claim wins), not taken in that event, a row taken over only
-- if it is a lapsed hold, the buyer's live held seats in that event plus these within
-- `p_maxes` (per event), the event not started. The buyer's locks, one per event, in the
-- order of their keys, then one statement, rows in (event, seat) order, the order every
-- claim of one event keeps too: a season claim and an event's claim, or two season claims,
-- wait in one direction.
--
-- `p_passes` (per event, null where the event's waiting room is off) are the buyer's
-- waiting-room passes the seats are claimed under, kept with each event's rows as an
-- event's claim keeps its pass: nothing is claimed in an event whose pass has ended.
--
-- Rows answered: 'held' (a row per event and seat), or what stopped it, judged under the
-- locks once the claim is rolled back: 'started' (a row per started event), 'pass_ended'
-- (a row per event whose pass has ended), 'limit' (a row per event whose limit it would
-- pass), 'unavailable' (a row per event and seat not to be had: not the season's, or
-- taken); 'retry' if nothing could be blamed by then (a competing hold that lapsed or was
-- released meanwhile).
--
-- (Migration 0021 dropped the form without `p_passes`.)
create or replace function boxoffice_claim_season(
    p_season uuid,
    p_events uuid[],
    p_tokens uuid[],
    p_user text,
    p_ttl double precision,
    p_maxes bigint[],
    p_seats text[],
    p_partial text,
    p_passes uuid[])
returns table (event_id uuid, outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language plpgsql volatile
-- Planned for each call's arrays: a cached generic plan, which cannot know how many events
-- and seats they hold, costs five times the custom plan's time (a season of 20 events:
-- 25-30 ms against 4-5 ms a claim).
set plan_cache_mode = force_custom_plan
as $$
#variable_conflict use_column
declare
    v_count bigint;
begin
    if current_setting('transaction_isolation') <> 'read committed' then
        raise exception 'boxoffice_claim_season needs READ COMMITTED, not %',
            current_setting('transaction_isolation');
    end if;
    perform set_config('synchronous_commit', 'off', true);
    perform pg_advisory_xact_lock(k.key)
       from (select boxoffice_buyer_lock(e, p_user) as key from unnest(p_events) as e) k
      order by k.key;
    begin
        with want as (
            select w.event_id, w.token, w.most, w.pass, s.seat_id
              from unnest(p_events, p_tokens, p_maxes, p_passes) as w(event_id, token, most, pass)
             cross join unnest(p_seats) as s(seat_id)
        ), claimed as (
            insert into reservation
                   (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                    created_at, expires_at, pass_ticket)
            select want.event_id, want.seat_id, want.token, p_user, 'H', a.ticket_type,
                   coalesce(pp.price_cents, t.price_cents), now(),
                   now() + make_interval(secs => p_ttl), want.pass
              from want
              join season_allocation a on a.season_id = p_season and a.seat_id = want.seat_id
              join season_ticket_type t on t.season_id = a.season_id and t.code = a.ticket_type
              left join season_partial_price pp
                     on pp.season_id = a.season_id and pp.code = p_partial
                    and pp.ticket_type = a.ticket_type
              join event e on e.event_id = want.event_id
             cross join lateral boxoffice_seat_taken(want.event_id, want.seat_id) st
             cross join lateral boxoffice_live_holds(want.event_id, p_user, want.most) lh
             where e.starts_at > now()
               and not st.taken
               and lh.live + cardinality(p_seats) <= want.most
               and not exists (select 1 from pass_ended pe
                                where pe.event_id = want.event_id and pe.ticket = want.pass)
             order by want.event_id, want.seat_id
            on conflict on constraint reservation_pkey do update
               set hold_token = excluded.hold_token, user_id = excluded.user_id,
                   status = 'H', ticket_type = excluded.ticket_type,
                   price_cents = excluded.price_cents, created_at = excluded.created_at,
                   expires_at = excluded.expires_at, pass_ticket = excluded.pass_ticket
             where boxoffice_lapsed(reservation.status, reservation.expires_at)
            returning 1)
        select count(*) into v_count from claimed;
        if v_count < cardinality(p_events) * cardinality(p_seats) then
            raise exception using errcode = 'BX001';
        end if;
    exception
        when sqlstate 'BX001' then
            return query
                select e.event_id, 'started', null::text, null::text, null::bigint,
                       null::timestamptz, null::timestamptz
                  from event e where e.event_id = any(p_events) and e.starts_at <= now();
            if found then
                return;
            end if;
            return query
                select w.event_id, 'pass_ended', null::text, null::text, null::bigint,
                       null::timestamptz, null::timestamptz
                  from unnest(p_events, p_passes) as w(event_id, pass)
                 where exists (select 1 from pass_ended pe
                                where pe.event_id = w.event_id and pe.ticket = w.pass);
            if found then
                return;
            end if;
            return query
                select w.event_id, 'limit', null::text, null::text, null::bigint,
                       null::timestamptz, null::timestamptz
                  from unnest(p_events, p_maxes) as w(event_id, most)
                 cross join lateral boxoffice_live_holds(w.event_id, p_user, w.most) lh
                 where lh.live + cardinality(p_seats) > w.most;
            if found then
                return;
            end if;
            return query
                select w.event_id, 'unavailable', s.seat_id, null::text, null::bigint,
                       null::timestamptz, null::timestamptz
                  from unnest(p_events) as w(event_id)
                 cross join unnest(p_seats) as s(seat_id)
                 cross join lateral boxoffice_seat_taken(w.event_id, s.seat_id) st
                 where st.taken
                    or not exists (select 1 from season_allocation a
                                    where a.season_id = p_season and a.seat_id = s.seat_id)
                 order by w.event_id, s.seat_id;
            if found then
                return;
            end if;
            return query
                select null::uuid, 'retry', null::text, null::text, null::bigint,
                       null::timestamptz, null::timestamptz;
            return;
    end;
    return query
        select r.event_id, 'held', r.seat_id, r.ticket_type, r.price_cents, r.created_at,
               r.expires_at
          from reservation r
          join unnest(p_events, p_tokens) as w(event_id, token)
            on r.event_id = w.event_id and r.hold_token = w.token
         order by r.event_id, r.seat_id;
end;
$$;


-- 3. The waiting list's offer.
--
-- In the caller's transaction, once the seats are free again (and before anyone else can
-- see them so), offers them to the waiting entries in order: the first entry whose
-- quantity (of its ticket type, if it names one) the seats left can serve gets that many,
-- the seats on general sale among them in seat order; and so on while seats and entries
-- remain. Only seats free by the caller's snapshot are offered: on general sale
-- (boxoffice_on_sale_to with no channel) and not taken (boxoffice_seat_taken). With p_hold
-- the offer's hold is written as reservation rows (the postgres hold store), taking over a
-- row only where it is a lapsed hold (boxoffice_lapsed), as a claim does; without, the
-- caller writes it in its own hold store before it commits. No per-buyer limit and no
-- pass apply: the entry asked for its quantity when it joined. The hold lives until the
-- offer's deadline plus p_grace seconds: whoever ends a lapsed offer (the server's sweep)
-- passes its seats on to the next entry before the hold itself lapses, so they never read
-- available meanwhile. Returns a row per seat offered.
create or replace function boxoffice_waitlist_offer(p_event uuid, p_seats text[], p_hold boolean,
                                                    p_grace double precision)
returns table (entry_id uuid, user_id text, hold_token uuid, seat_id text, ticket_type text,
               price_cents bigint, created_at timestamptz, offer_expires_at timestamptz,
               expires_at timestamptz)
language plpgsql volatile
as $$
#variable_conflict use_column
declare
    v_entry record;
    v_left text[];
    v_types text[];
    v_take text[];
    v_token uuid;
    v_deadline timestamptz;
begin
    -- The seats on general sale, in seat order, with their ticket types.
    select coalesce(array_agg(a.seat_id order by a.seat_id), '{}'),
           coalesce(array_agg(a.ticket_type order by a.seat_id), '{}')
      into v_left, v_types
      from seat_allocation a
     cross join lateral boxoffice_seat_taken(a.event_id, a.seat_id) st
     where a.event_id = p_event and a.seat_id = any(p_seats)
       and boxoffice_on_sale_to(a.channel, null)
       and not st.taken;
    if cardinality(v_left) = 0 then
        return;
    end if;
    select now() + make_interval(secs => e.waitlist_offer_seconds)
      into v_deadline
      from event e where e.event_id = p_event;
    for v_entry in
        select w.entry_id, w.user_id, w.quantity, w.ticket_type
          from waitlist_entry w
         where w.event_id = p_event and w.status = 'W'
         order by w.seq
           for update
    loop
        exit when cardinality(v_left) = 0;
        select coalesce(array_agg(s.seat_id order by s.n), '{}')
          into v_take
          from (select l.seat_id, l.n
                  from unnest(v_left, v_types) with ordinality as l (seat_id, ticket_type, n)
                 where v_entry.ticket_type is null or l.ticket_type = v_entry.ticket_type
                 order by l.n
                 limit v_entry.quantity) s;
        continue when cardinality(v_take) < v_entry.quantity;
        v_token := gen_random_uuid();
        update waitlist_entry w
           set status = 'O', offer_token = v_token, offer_seats = v_take,
               offer_expires_at = v_deadline
         where w.event_id = p_event and w.entry_id = v_entry.entry_id;
        if p_hold then
            insert into reservation
                   (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                    created_at, expires_at)
            select p_event, a.seat_id, v_token, v_entry.user_id, 'H', a.ticket_type,
                   t.price_cents, now(), v_deadline + make_interval(secs => p_grace)
              from seat_allocation a
              join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
             where a.event_id = p_event and a.seat_id = any(v_take)
            on conflict on constraint reservation_pkey do update
               set hold_token = excluded.hold_token, user_id = excluded.user_id,
                   status = 'H', ticket_type = excluded.ticket_type,
                   price_cents = excluded.price_cents, created_at = excluded.created_at,
                   expires_at = excluded.expires_at, pass_ticket = null
             where boxoffice_lapsed(reservation.status, reservation.expires_at);
        end if;
        return query
            select v_entry.entry_id, v_entry.user_id, v_token, a.seat_id, a.ticket_type,
                   t.price_cents, now(), v_deadline,
                   v_deadline + make_interval(secs => p_grace)
              from seat_allocation a
              join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
             where a.event_id = p_event and a.seat_id = any(v_take)
             order by a.seat_id;
        select coalesce(array_agg(l.seat_id order by l.n), '{}'),
               coalesce(array_agg(l.ticket_type order by l.n), '{}')
          into v_left, v_types
          from unnest(v_left, v_types) with ordinality as l (seat_id, ticket_type, n)
         where l.seat_id <> all (v_take);
    end loop;
end;
$$;
