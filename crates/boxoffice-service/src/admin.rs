//! What the organizer console reads: an event's orders a page at a time (searched by order
//! id, buyer or seat), its sales as CSV, and its report. Each answer is bounded: a page
//! by its limit, the CSV by being written a page of lines at a time as it is sent.

use std::collections::HashMap;

use boxoffice_api::{
    ChannelReport, EventReport, GaReport, MinuteSales, QueueReport, SectionReport,
    TicketTypeReport, WaitlistReport,
};
use boxoffice_core::availability::SeatStatus;
use boxoffice_core::hold::OrderStatus;
use boxoffice_core::ids::EventId;
use boxoffice_store::pg::admin::{self, LineCursor, OrderCursor, OrderFilter, SaleLine};
use bytes::Bytes;
use futures::Stream;

use crate::layouts::{event_layout, priced};
use crate::orders::LabelledOrder;
use crate::{availability, Error, Services};

/// Orders a page holds unless asked otherwise.
pub const DEFAULT_PAGE: u32 = 50;
/// Most orders a page holds.
pub const MAX_PAGE: u32 = 500;
/// Most seats a search by seat label looks for.
pub const MAX_SEARCH_SEATS: usize = 1_000;
/// Sale lines read from Postgres at a time while the CSV is sent.
const CSV_PAGE: i64 = 2_000;
/// The CSV's header line.
pub const CSV_HEADER: &str =
    "order_id,created_at,user_id,status,seat_id,label,ticket_type,price_cents,currency";

/// Which orders to list.
#[derive(Clone, Copy, Debug, Default)]
pub struct OrderQuery<'a> {
    /// An order id, a buyer's id, or (part of) a seat's label or its id.
    pub q: Option<&'a str>,
    /// Only orders with this status.
    pub status: Option<OrderStatus>,
    /// At most this many (1 to [`MAX_PAGE`]).
    pub limit: u32,
    /// Where the previous page ended.
    pub cursor: Option<OrderCursor>,
}

/// A page of `event`'s orders, newest first, with their seats' labels, and the cursor of
/// the next page.
pub async fn orders(
    state: &Services,
    event: EventId,
    query: OrderQuery<'_>,
) -> Result<(Vec<LabelledOrder>, Option<String>), Error> {
    let map = event_layout(state, event).await?;
    let q = query.q.map(str::trim).filter(|q| !q.is_empty());
    let seats: Vec<String> = match q {
        Some(q) => {
            let needle = q.to_lowercase();
            map.map
                .seats()
                .iter()
                .filter(|s| s.id == q || s.label.to_lowercase().contains(&needle))
                .take(MAX_SEARCH_SEATS)
                .map(|s| s.id.clone())
                .collect()
        }
        None => Vec::new(),
    };
    let filter = OrderFilter {
        status: query.status,
        search: q,
        seats: &seats,
        limit: query.limit,
        after: query.cursor,
    };
    let (orders, next) = admin::orders_page(&state.pool, event, filter).await?;
    let orders = orders
        .into_iter()
        .map(|order| LabelledOrder {
            seats: priced(&map, &order.seats),
            order,
        })
        .collect();
    Ok((orders, next.map(|c| c.encode())))
}

/// Where the CSV is: the seats of orders, then the bookings, then done.
enum Part {
    Header,
    Seats(Option<LineCursor>),
    Bookings(Option<LineCursor>),
    Done,
}

/// Every seat of `event`'s orders (oldest order first) and every general-admission
/// booking, as CSV under [`CSV_HEADER`]: a booking's line has the area's code as its
/// `seat_id`, `<area name> × <places>` as its label and `area` as its ticket type. The
/// event must exist; the lines are read a page at a time as the stream is polled.
pub async fn sales_csv(
    state: &Services,
    event: EventId,
) -> Result<impl Stream<Item = Result<Bytes, Error>> + Send + 'static, Error> {
    let map = event_layout(state, event).await?;
    let areas: HashMap<String, String> = admin::area_names(&state.pool, event)
        .await?
        .into_iter()
        .collect();
    let pool = state.pool.clone();
    Ok(futures::stream::try_unfold(Part::Header, move |part| {
        let (pool, map, areas) = (pool.clone(), map.clone(), areas.clone());
        async move {
            let (lines, next) = match part {
                Part::Done => return Ok(None),
                Part::Header => {
                    return Ok(Some((
                        Bytes::from(format!("{CSV_HEADER}\n")),
                        Part::Seats(None),
                    )))
                }
                Part::Seats(after) => {
                    let lines = admin::seat_lines(&pool, event, after.as_ref(), CSV_PAGE).await?;
                    let next = match lines.last() {
                        Some(l) if lines.len() as i64 == CSV_PAGE => {
                            Part::Seats(Some((l.created_at, l.order_id, l.seat_id.clone())))
                        }
                        _ => Part::Bookings(None),
                    };
                    (lines, next)
                }
                Part::Bookings(after) => {
                    let lines =
                        admin::booking_lines(&pool, event, after.as_ref(), CSV_PAGE).await?;
                    let next = match lines.last() {
                        Some(l) if lines.len() as i64 == CSV_PAGE => {
                            Part::Bookings(Some((l.created_at, l.order_id, String::new())))
                        }
                        _ => Part::Done,
                    };
                    (lines, next)
                }
            };
            let label = |line: &SaleLine| match &line.ticket_type {
                Some(_) => map
                    .map
                    .get(&line.seat_id)
                    .map(|s| s.label.clone())
                    .unwrap_or_default(),
                None => format!(
                    "{} × {}",
                    areas.get(&line.seat_id).map_or("", String::as_str),
                    line.quantity
                ),
            };
            Ok(Some((csv_lines(&lines, label), next)))
        }
    }))
}

/// `lines` as CSV rows.
fn csv_lines(lines: &[SaleLine], label: impl Fn(&SaleLine) -> String) -> Bytes {
    let mut out = csv::Writer::from_writer(Vec::with_capacity(lines.len() * 120));
    for line in lines {
        out.write_record([
            line.order_id.to_string(),
            line.created_at
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            line.user_id.clone(),
            line.status.clone(),
            line.seat_id.clone(),
            label(line),
            line.ticket_type
                .clone()
                .unwrap_or_else(|| "area".to_owned()),
            line.price_cents.to_string(),
            line.currency.clone(),
        ])
        .expect("writing to memory cannot fail");
    }
    Bytes::from(out.into_inner().expect("writing to memory cannot fail"))
}

/// Where `event`'s sale stands: seats by status (all, and by section), revenue by section,
/// ticket type and area, and seats sold a minute over the last hour. The hold store must
/// answer: without it held seats would count as available.
pub async fn report(state: &Services, event: EventId) -> Result<EventReport, Error> {
    let (availability, sums) = futures::try_join!(
        availability::event_availability_from(state, event, &state.pool, None),
        async {
            admin::report_sums(&state.pool, event)
                .await
                .map_err(Error::from)
        },
    )?;
    if availability.holds_unknown {
        return Err(Error::Unavailable {
            reason: "the hold store is unavailable".into(),
            retry_after: std::time::Duration::from_secs(1),
        });
    }
    let policy = crate::layouts::event_policy(state, event).await?;
    let seats = availability.map.map.seats();
    let mut by_section: Vec<SectionReport> = Vec::new();
    let mut counts = [0u32; 4];
    for (seat, s) in seats.iter().zip(&availability.states) {
        if by_section.last().is_none_or(|r| r.section != seat.section) {
            by_section.push(SectionReport {
                section: seat.section.clone(),
                sold: 0,
                held: 0,
                available: 0,
                revenue_cents: 0,
            });
        }
        let section = by_section.last_mut().expect("just pushed");
        match s.status {
            SeatStatus::Sold | SeatStatus::Resale => section.sold += 1,
            SeatStatus::Held => section.held += 1,
            SeatStatus::Available => section.available += 1,
            SeatStatus::NotForSale => {}
        }
        counts[match s.status {
            SeatStatus::Sold | SeatStatus::Resale => 0,
            SeatStatus::Held => 1,
            SeatStatus::Available => 2,
            SeatStatus::NotForSale => 3,
        }] += 1;
    }
    let revenue = |list: &[admin::Sold], key: &str| {
        list.iter()
            .find(|s| s.key == key)
            .map_or((0, 0), |s| (s.seats, s.revenue_cents))
    };
    for section in &mut by_section {
        section.revenue_cents = revenue(&sums.by_section, &section.section).1;
    }
    let by_ticket_type = policy
        .ticket_types
        .iter()
        .map(|code| {
            let (sold, revenue_cents) = revenue(&sums.by_ticket_type, code);
            TicketTypeReport {
                ticket_type: code.clone(),
                sold: sold as u32,
                revenue_cents,
            }
        })
        .collect();
    let ga: Vec<GaReport> = availability
        .ga
        .iter()
        .map(|area| GaReport {
            code: area.code.clone(),
            capacity: area.capacity,
            left: area.left,
            revenue_cents: revenue(&sums.ga, &area.code).1,
        })
        .collect();
    let queue = match state.admission.queue(&state.pool, event).await? {
        None => None,
        Some(_) => match line_report(state, event).await {
            Ok(report) => Some(report),
            Err(error) => {
                tracing::warn!(%error, %event, "report: the waiting room's line is unknown");
                None
            }
        },
    };
    let mut channels = Vec::new();
    for channel in boxoffice_store::pg::events::channels(&state.pool, event).await? {
        channels.push(channel_report(state, event, &availability.map, channel).await?);
    }
    let (waiting, offered) = boxoffice_store::sales::waitlist::counts(&state.pool, event).await?;
    let seat_revenue: i64 = sums.by_ticket_type.iter().map(|s| s.revenue_cents).sum();
    let ga_revenue: i64 = sums.ga.iter().map(|s| s.revenue_cents).sum();
    Ok(EventReport {
        sold: counts[0],
        held: counts[1],
        available: counts[2],
        not_for_sale: counts[3],
        revenue_cents: seat_revenue + ga_revenue,
        currency: admin::currency(&state.pool, event).await?,
        by_section,
        by_ticket_type,
        ga,
        sales_per_minute: sums
            .per_minute
            .into_iter()
            .map(|(minute, seats)| MinuteSales {
                minute,
                seats: seats as u32,
            })
            .collect(),
        queue,
        channels,
        waitlist: WaitlistReport { waiting, offered },
    })
}

/// A channel's seats in the report: those its view has on sale and the public view
/// (`public`) does not.
async fn channel_report(
    state: &Services,
    event: EventId,
    public: &crate::seat_map::RenderedSeatMap,
    channel: boxoffice_core::event::Channel,
) -> Result<ChannelReport, Error> {
    let view =
        availability::event_availability_from(state, event, &state.pool, Some(&channel.code))
            .await?;
    let mut report = ChannelReport {
        code: channel.code,
        name: channel.name,
        seats: 0,
        sold: 0,
        held: 0,
        available: 0,
    };
    for (seat, s) in view.map.map.seats().iter().zip(&view.states) {
        if !public.is_elsewhere(&seat.id) || view.map.is_elsewhere(&seat.id) {
            continue;
        }
        report.seats += 1;
        match s.status {
            SeatStatus::Sold | SeatStatus::Resale => report.sold += 1,
            SeatStatus::Held => report.held += 1,
            SeatStatus::Available => report.available += 1,
            SeatStatus::NotForSale => {}
        }
    }
    Ok(report)
}

/// The line's counts as Redis has them now, and the rate in force as this instance last
/// read it.
async fn line_report(state: &Services, event: EventId) -> Result<QueueReport, Error> {
    let counts = state.waiting_room.counts(event).await?;
    let line = crate::queue::line(state, event).await?;
    Ok(QueueReport {
        waiting: counts.waiting,
        admitted: counts.admitted,
        admitting_per_minute: line.state.admitting_per_minute,
        slowed_because: Some(line.state.why.clone()).filter(|why| {
            !why.is_empty() && line.state.admitting_per_minute < line.settings.admit_per_minute
        }),
    })
}
