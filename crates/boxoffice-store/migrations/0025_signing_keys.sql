-- Buyer-token signing keys of an organization, named by the `kid` a token's header
-- carries: an HS256 secret the platform shares with Boxoffice, or the public half of an
-- Ed25519 key the platform keeps (Boxoffice checks its buyers' tokens, never mints one).
-- A retired key signs no valid token any more. Every change moves key_generation, so
-- each server reloads them with the keys.
create table signing_key (
    kid             text primary key check (kid ~ '^[A-Za-z0-9_-]{1,64}$'),
    organization_id uuid not null references organization (organization_id),
    algorithm       text not null check (algorithm in ('HS256', 'EdDSA')),
    -- HS256: the shared secret (Boxoffice must keep it to check tokens; never shown again).
    secret          bytea check ((algorithm = 'HS256') = (secret is not null)),
    -- EdDSA: the public key, PEM SubjectPublicKeyInfo.
    public_key      text check ((algorithm = 'EdDSA') = (public_key is not null)),
    created_at      timestamptz not null default now(),
    retired_at      timestamptz
);

create index signing_key_by_organization on signing_key (organization_id, created_at);

create trigger signing_key_changed
    after insert or delete or update of retired_at on signing_key
    for each statement execute function api_key_moves_generation();
