-- Each organization's webhook: where its outbox events are delivered, and the secret that
-- signs them (kept as given, since the relay signs with it; never shown again and never
-- in the audit log). BOXOFFICE_WEBHOOK_URLS keeps serving the default organization too.
create table organization_webhook (
    organization_id uuid primary key references organization (organization_id),
    url             text not null check (length(url) between 1 and 2000),
    secret          text not null,
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now()
);

-- Events raised while their organization has no webhook wait for one, up to 7 days; the
-- sweep finds the oldest of those never tried by when they were raised.
create index outbox_waiting on outbox (created_at) where delivered_at is null and attempts = 0;
