-- Many holds' claims in one round trip and one transaction. Under load, an instance's
-- claims wait for a connection anyway; sending those waiting together spends one round
-- trip, one transaction start and one commit on all of them, where each paid its own.
--
-- Each hold is claimed by boxoffice_claim_hold (migration 0007), exactly as when claimed
-- alone: the buyer's lock, the claim and its all-or-nothing rollback. The holds run one
-- after another in the order given, each seeing what the ones before it claimed (the same
-- transaction), so two holds of one seat or one buyer in a batch are judged as if asked one
-- after the other. All are stamped with the batch's start (now() is the transaction's), a
-- few milliseconds early at most. The buyer locks and seat rows a hold takes stay held
-- until the batch commits, so:
--
-- 1. A lock wait is cut short (lock_timeout 100 ms for this transaction): a batch waiting
--    on another's seat or buyer would hold up every hold in it, and two batches waiting on
--    each other would wait for the deadlock detector (a second). A hold that fails for that
--    or any other reason is rolled back alone (its own block) and answered 'retry': the
--    caller claims it again alone, once this batch has committed and let go of its locks,
--    and any error it meets then is that hold's own.
-- 2. The holds before and after it are unaffected: each block is a subtransaction.
--
-- Holds: p_events, p_tokens, p_users, p_ttls and p_maxes are per hold (boxoffice_claim_hold's
-- arguments); p_baskets and p_seats list every seat of every hold, each seat with the number
-- (1-based) of its hold, each hold's seats in the order to claim them.
--
-- Rows answered: boxoffice_claim_hold's rows for each hold, headed by the hold's number, or
-- one row (n, 'retry', null, ...) for a hold to claim again alone.
create function boxoffice_claim_holds(
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
begin
    perform set_config('lock_timeout', '100ms', true);
    for i in 1 .. coalesce(cardinality(p_tokens), 0) loop
        begin
            return query
                select i, c.*
                  from boxoffice_claim_hold(
                           p_events[i], p_tokens[i], p_users[i], p_ttls[i],
                           array(select b.seat_id
                                   from unnest(p_baskets, p_seats) with ordinality
                                        as b(basket, seat_id, n)
                                  where b.basket = i
                                  order by b.n),
                           p_maxes[i]) c;
        exception when others then
            return query select i, 'retry'::text, null::text, null::text, null::bigint,
                                null::timestamptz, null::timestamptz;
        end;
    end loop;
end;
$$;
