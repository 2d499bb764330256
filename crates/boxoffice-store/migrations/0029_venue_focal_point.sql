-- A venue's focal point: the point its seats look at (the stage's centre), drawn in the
-- console's designer or given through the API. Among equal choices, best available prefers
-- the seats nearest it. Both coordinates or neither.
alter table venue
    add column focal_x float8,
    add column focal_y float8,
    add constraint venue_focal_point check ((focal_x is null) = (focal_y is null));
