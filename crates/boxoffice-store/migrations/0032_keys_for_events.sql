-- A check-in key limited to some events (a phone paired to one event's door): its calls on
-- any other event answer 404. Null: every event of its organization.
alter table api_key add column events uuid[];
