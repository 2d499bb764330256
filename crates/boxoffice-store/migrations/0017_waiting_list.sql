-- The waiting list: buyers wait in order for an event's seats, and seats that come back
-- (an order cancelled, a channel released, seats put on sale, an offer not bought in time)
-- go to the first waiting buyer they can serve, as a hold of that buyer's, before anyone
-- else can have them.
--
-- * waitlist_entry: one per buyer per event while waiting ('W') or offered ('O'); then
--   bought ('B'), left ('L') or lapsed ('E', an offer not bought in time). `seq` orders the
--   list. An offer is a hold: its token, seats and deadline are kept with the entry.
-- * event.waitlist_offer_seconds: how long an offer stands (default 900).
-- * boxoffice_waitlist_offer(event, seats, hold, grace): in the caller's transaction, once
--   the seats are free again (and before anyone else can see them so), offers them to the
--   waiting entries in order: the first entry whose quantity (of its ticket type, if it
--   names one) the seats left can serve gets that many, the seats on general sale among
--   them in seat order; and so on while seats and entries remain. Only seats free by the
--   caller's snapshot are offered (on general sale, not sold, not held). With p_hold the offer's
--   hold is written as reservation rows (the postgres hold store); without, the caller
--   writes it in its own hold store before it commits. The hold lives until the offer's
--   deadline plus p_grace seconds: whoever ends a lapsed offer (the server's sweep) passes
--   its seats on to the next entry before the hold itself lapses, so they never read
--   available meanwhile. Returns a row per seat offered.

alter table event add column waitlist_offer_seconds integer not null default 900
    constraint event_waitlist_offer_seconds check (waitlist_offer_seconds between 60 and 86400);

create table waitlist_entry (
    event_id          uuid not null references event (event_id) on delete cascade,
    entry_id          uuid not null,
    user_id           text not null,
    quantity          integer not null constraint waitlist_entry_quantity check (quantity between 1 and 100),
    ticket_type       text,
    seq               bigint generated always as identity,
    joined_at         timestamptz not null default now(),
    status            char(1) not null default 'W'
                      constraint waitlist_entry_status check (status in ('W', 'O', 'B', 'L', 'E')),
    offer_token       uuid,
    offer_seats       text[],
    offer_expires_at  timestamptz,
    ended_at          timestamptz,
    primary key (event_id, entry_id),
    foreign key (event_id, ticket_type) references ticket_type (event_id, code)
);
-- One live entry per buyer per event.
create unique index waitlist_entry_one_per_buyer on waitlist_entry (event_id, user_id)
    where status in ('W', 'O');
-- The line, in order.
create index waitlist_entry_waiting on waitlist_entry (event_id, seq) where status = 'W';
-- Offers by token (checkout of an offer) and by deadline (the sweep).
create unique index waitlist_entry_offer on waitlist_entry (event_id, offer_token)
    where offer_token is not null;
create index waitlist_entry_offered on waitlist_entry (offer_expires_at) where status = 'O';

create function boxoffice_waitlist_offer(p_event uuid, p_seats text[], p_hold boolean,
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
     where a.event_id = p_event and a.seat_id = any(p_seats) and a.channel is null
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
             where reservation.status = 'H' and reservation.expires_at <= now();
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
