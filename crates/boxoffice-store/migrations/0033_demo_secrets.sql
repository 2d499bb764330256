-- The secrets `serve --demo` makes for itself when none is configured (the buyers' token
-- secret, the admin token): made by the first start and read by every later one, so a
-- buyer's `/?order=` link and a signed-in console outlive a restart. A configured secret is
-- never written here.
create table demo_secret (
    name text primary key check (name in ('jwt_secret', 'admin_token')),
    secret text not null check (length(secret) >= 32),
    created_at timestamptz not null default now()
);
