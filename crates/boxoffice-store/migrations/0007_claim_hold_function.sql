-- A hold's claim in one round trip. The postgres hold store used to send four statements
-- per hold (BEGIN, the buyer's lock, the claim, COMMIT) and a fifth when the claim came
-- back empty; this function runs the same steps on the server, in the caller's (implicit)
-- transaction:
--
-- 1. READ COMMITTED is required: the per-user count must see every hold of this buyer
--    that committed before the lock was granted, and each statement of a VOLATILE
--    function takes a fresh snapshot only under READ COMMITTED. Any other level raises.
-- 2. Asynchronous commit for this transaction: a hold is ephemeral, so a crash may lose
--    the last moments of holds, never an order.
-- 3. The buyer's lock: pg_advisory_xact_lock on the one key recipe every path that makes
--    or extends holds of (event, user) takes, held until the transaction ends.
-- 4. The claim, one statement for the whole basket (see `PgHoldStore::claim` for why each
--    part of it is there), inside a block: should it claim fewer seats than asked, the
--    block is rolled back (all or nothing) and the answer says why, judged while the lock
--    is still held.
--
-- Rows answered: ('held', seat, ticket type, price, created, expires) for every seat of a
-- hold; ('unavailable', seat, ...) for every seat that could not be had; or one row
-- ('started', null, ...) or ('limit', null, ...).
create function boxoffice_claim_hold(
    p_event uuid,
    p_token uuid,
    p_user text,
    p_ttl_seconds double precision,
    p_seats text[],
    p_max bigint)
returns table (outcome text, seat_id text, ticket_type text, price_cents bigint,
               created_at timestamptz, expires_at timestamptz)
language plpgsql volatile
as $$
#variable_conflict use_column
declare
    v_count bigint;
    v_seats text[];
    v_types text[];
    v_prices bigint[];
    v_created timestamptz;
    v_expires timestamptz;
    v_started boolean;
    v_live bigint;
begin
    if current_setting('transaction_isolation') <> 'read committed' then
        raise exception 'boxoffice_claim_hold needs READ COMMITTED, not %',
            current_setting('transaction_isolation');
    end if;
    perform set_config('synchronous_commit', 'off', true);
    perform pg_advisory_xact_lock(
        hashtextextended('boxoffice.hold:' || p_event::text || ':' || p_user, 0));
    begin
        with claimed as (
            insert into reservation
                   (event_id, seat_id, hold_token, user_id, status, ticket_type, price_cents,
                    created_at, expires_at)
            select a.event_id, a.seat_id, p_token, p_user, 'H', a.ticket_type, t.price_cents,
                   now(), now() + make_interval(secs => p_ttl_seconds)
              from unnest(p_seats) as want(seat_id)
             cross join lateral (select * from seat_allocation s
                                  where s.event_id = p_event and s.seat_id = want.seat_id
                                  limit 1) a
              join ticket_type t on t.event_id = a.event_id and t.code = a.ticket_type
              join event e on e.event_id = a.event_id
             where e.starts_at > now()
               and (select true from order_seat o
                     where o.event_id = a.event_id and o.seat_id = a.seat_id and not o.released
                     limit 1) is null
               and (select h.status = 'R' or h.expires_at > now() from reservation h
                     where h.event_id = a.event_id and h.seat_id = a.seat_id) is not true
               and (select count(*) from (
                        select 1 from reservation r
                         where r.event_id = p_event and r.user_id = p_user and r.status = 'H'
                           and r.expires_at > now()
                         limit p_max) live) + cardinality(p_seats) <= p_max
             order by a.seat_id
               for share of a
            on conflict on constraint reservation_pkey do update
               set hold_token = excluded.hold_token, user_id = excluded.user_id, status = 'H',
                   ticket_type = excluded.ticket_type, price_cents = excluded.price_cents,
                   created_at = excluded.created_at, expires_at = excluded.expires_at
             where reservation.status = 'H' and reservation.expires_at <= now()
            returning reservation.seat_id, reservation.ticket_type, reservation.price_cents,
                      reservation.created_at, reservation.expires_at)
        select count(*), array_agg(c.seat_id order by c.seat_id),
               array_agg(c.ticket_type order by c.seat_id),
               array_agg(c.price_cents order by c.seat_id),
               min(c.created_at), min(c.expires_at)
          into v_count, v_seats, v_types, v_prices, v_created, v_expires
          from claimed c;
        if v_count < cardinality(p_seats) then
            raise exception using errcode = 'BX001';
        end if;
    exception when sqlstate 'BX001' then
        -- Nothing is claimed now. A partial claim means some seats were taken; an empty
        -- one may also mean the event has started or the buyer is at the limit.
        if v_count = 0 then
            select e.starts_at <= now(),
                   (select count(*) from (
                        select 1 from reservation r
                         where r.event_id = p_event and r.user_id = p_user and r.status = 'H'
                           and r.expires_at > now()
                         limit p_max) live)
              into v_started, v_live
              from event e where e.event_id = p_event;
            if v_started is distinct from false then
                return query select 'started'::text, null::text, null::text, null::bigint,
                                    null::timestamptz, null::timestamptz;
                return;
            end if;
            if v_live + cardinality(p_seats) > p_max then
                return query select 'limit'::text, null::text, null::text, null::bigint,
                                    null::timestamptz, null::timestamptz;
                return;
            end if;
        end if;
        return query select 'unavailable'::text, want.seat_id, null::text, null::bigint,
                            null::timestamptz, null::timestamptz
                       from unnest(p_seats) with ordinality as want(seat_id, n)
                      where want.seat_id <> all (coalesce(v_seats, '{}'))
                      order by want.n;
        return;
    end;
    return query select 'held'::text, c.seat_id, c.ticket_type, c.price_cents, v_created,
                        v_expires
                   from unnest(v_seats, v_types, v_prices) as c(seat_id, ticket_type, price_cents);
end;
$$;
