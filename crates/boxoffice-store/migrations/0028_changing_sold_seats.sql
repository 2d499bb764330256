-- Changing sold seats: moves and swaps of an order's seats, resale listings, and season
-- nights taken back.

-- Until when a buyer may move the seats of their own order (null: staff alone move them).
alter table event add column buyer_moves_until timestamptz;

-- A seat that leaves its order (moved, swapped, or resold to another buyer) leaves as its
-- row: the row goes, and its ticket is revoked with it, as when a sold row is released.
create trigger order_seat_left
    after delete on order_seat
    for each row when (not old.released)
    execute function order_seat_ticket_revoked();

-- Sold seats their buyer offers again: held and bought by anyone as a free seat is, and
-- while listed still the seller's (their row, their ticket) until another buyer's order
-- takes the seat from them.
create table resale_listing (
    event_id  uuid not null,
    seat_id   text not null,
    order_id  uuid not null,
    listed_at timestamptz not null default now(),
    primary key (event_id, seat_id),
    foreign key (event_id, order_id) references ticket_order (event_id, order_id) on delete cascade
);
create index resale_listing_of_order on resale_listing (order_id);
