//! What a buyer shows at the door: a ticket's secret as a QR code (error correction M, as
//! ordinary readers expect: a compact secret in alphanumeric mode, a JSON one in byte
//! mode), alone as SVG or on a PDF page per ticket with the event, time, venue, seat,
//! ticket type and price, the code to type and the order (not the buyer's id: a platform's
//! internal name for its buyer means nothing on paper). Text is set in the PDF's standard
//! Helvetica, so the file embeds no font.

use chrono::{DateTime, Utc};
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str};
use qrcode::bits::Bits;
use qrcode::render::svg;
use qrcode::{Color, EcLevel, QrCode, Version};

/// The QR code's alphanumeric set, which a compact secret keeps to.
const ALPHANUMERIC: &str = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:";

/// The QR code of `secret` at error correction M, in the smallest version that holds it:
/// in alphanumeric mode when every character is of that set (a compact secret: version
/// 7, 45×45 modules), else its bytes in byte mode.
pub fn qr(secret: &str) -> QrCode {
    let alphanumeric = secret.chars().all(|c| ALPHANUMERIC.contains(c));
    (1..=40)
        .find_map(|v| {
            let mut bits = Bits::new(Version::Normal(v));
            if alphanumeric {
                bits.push_alphanumeric_data(secret.as_bytes()).ok()?;
            } else {
                bits.push_byte_data(secret.as_bytes()).ok()?;
            }
            bits.push_terminator(EcLevel::M).ok()?;
            QrCode::with_bits(bits, EcLevel::M).ok()
        })
        .expect("a secret is far shorter than a QR code holds")
}

/// The QR code of `secret` as an SVG image, with its quiet zone.
pub fn qr_svg(secret: &str) -> String {
    qr(secret)
        .render::<svg::Color<'_>>()
        .min_dimensions(240, 240)
        .quiet_zone(true)
        .build()
}

/// One page of a ticket PDF.
pub struct Page<'a> {
    /// The event's name.
    pub event: &'a str,
    /// When it starts.
    pub starts_at: DateTime<Utc>,
    /// The event's time zone, in which the page says when it starts.
    pub time_zone: &'a str,
    /// The venue's name.
    pub venue: &'a str,
    /// "Stalls, Row C, Seat 12", or "Standing floor, place 2 of 3".
    pub label: &'a str,
    /// The ticket type's name.
    pub ticket_type: &'a str,
    /// The ticket's id.
    pub ticket_id: uuid::Uuid,
    /// The order or booking it is of.
    pub order: Option<uuid::Uuid>,
    /// What it was sold at, as printed (`€45.00`).
    pub price: String,
    /// What the QR code carries.
    pub secret: &'a str,
    /// The code to type, as printed (`7KQF-2M9X-PD`).
    pub code: &'a str,
}

/// `cents` in `currency` as a ticket prints it: `€45.00`, `£9.50`, `$12.00`, `CHF 30.00`.
pub fn price(cents: i64, currency: &str) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let amount = format!(
        "{}.{:02}",
        cents.unsigned_abs() / 100,
        cents.unsigned_abs() % 100
    );
    match currency {
        "EUR" => format!("{sign}€{amount}"),
        "GBP" => format!("{sign}£{amount}"),
        "USD" => format!("{sign}${amount}"),
        other => format!("{sign}{other} {amount}"),
    }
}

/// A4, in points.
const WIDTH: f32 = 595.0;
const HEIGHT: f32 = 842.0;
const MARGIN: f32 = 56.0;
/// The QR code's side, quiet zone included.
const QR_SIDE: f32 = 260.0;

/// A PDF with a page per ticket.
pub fn pdf(pages: &[Page<'_>]) -> Vec<u8> {
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let regular = Ref::new(3);
    let bold = Ref::new(4);
    let first = 5;
    let page_refs: Vec<Ref> = (0..pages.len())
        .map(|i| Ref::new(first + 2 * i as i32))
        .collect();

    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(page_refs.iter().copied())
        .count(pages.len() as i32);
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));

    for (page, &id) in pages.iter().zip(&page_refs) {
        let contents = Ref::new(id.get() + 1);
        let mut p = pdf.page(id);
        p.parent(tree)
            .media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT))
            .contents(contents);
        p.resources()
            .fonts()
            .pair(Name(b"F1"), regular)
            .pair(Name(b"F2"), bold);
        p.finish();
        pdf.stream(contents, &page_content(page));
    }
    pdf.finish()
}

fn page_content(page: &Page<'_>) -> Vec<u8> {
    let mut c = Content::new();
    let mut y = HEIGHT - MARGIN - 24.0;
    let line = |c: &mut Content, font: &[u8], size: f32, text: &str, y: f32| {
        c.begin_text();
        c.set_font(Name(font), size);
        c.next_line(MARGIN, y);
        c.show(Str(&win_ansi(text)));
        c.end_text();
    };
    line(&mut c, b"F2", 24.0, page.event, y);
    y -= 30.0;
    line(
        &mut c,
        b"F1",
        14.0,
        &boxoffice_core::local_time::date_time(page.starts_at, page.time_zone),
        y,
    );
    y -= 20.0;
    line(&mut c, b"F1", 14.0, page.venue, y);
    y -= 44.0;
    line(&mut c, b"F2", 20.0, page.label, y);
    y -= 26.0;
    line(
        &mut c,
        b"F1",
        14.0,
        &format!("{} · {}", page.ticket_type, page.price),
        y,
    );
    y -= 24.0 + QR_SIDE;

    let code = qr(page.secret);
    let width = code.width();
    let quiet = 4;
    let module = QR_SIDE / (width + 2 * quiet) as f32;
    let left = (WIDTH - QR_SIDE) / 2.0;
    c.set_fill_gray(0.0);
    let colors = code.to_colors();
    for row in 0..width {
        let mut col = 0;
        while col < width {
            if colors[row * width + col] != Color::Dark {
                col += 1;
                continue;
            }
            let start = col;
            while col < width && colors[row * width + col] == Color::Dark {
                col += 1;
            }
            c.rect(
                left + (quiet + start) as f32 * module,
                y + QR_SIDE - (quiet + row + 1) as f32 * module,
                (col - start) as f32 * module,
                module,
            );
        }
    }
    c.fill_nonzero();
    y -= 30.0;
    let code = format!("Code  {}", page.code);
    // Helvetica-Bold's digits and capitals are about 0.7 of the size wide.
    let code_left = (WIDTH - code.len() as f32 * 18.0 * 0.68) / 2.0;
    c.begin_text();
    c.set_font(Name(b"F2"), 18.0);
    c.next_line(code_left, y);
    c.show(Str(&win_ansi(&code)));
    c.end_text();
    y -= 30.0;
    if let Some(order) = page.order {
        line(&mut c, b"F1", 9.0, &format!("Order {order}"), y);
        y -= 13.0;
    }
    line(&mut c, b"F1", 9.0, &format!("Ticket {}", page.ticket_id), y);
    c.finish().to_vec()
}

/// `text` in WinAnsiEncoding, the standard fonts' encoding: Latin-1 and the common
/// typographic marks; anything else is a question mark.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars()
        .map(|ch| match ch {
            ' '..='~' | '\u{a0}'..='\u{ff}' => ch as u8,
            '€' => 0x80,
            '…' => 0x85,
            '‘' => 0x91,
            '’' => 0x92,
            '“' => 0x93,
            '”' => 0x94,
            '•' => 0x95,
            '–' => 0x96,
            '—' => 0x97,
            _ => b'?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compact_secret_is_coded_in_alphanumeric_mode_in_45_by_45_modules() {
        let secret = format!("BX2:{}", "A1 $%*+-./:".repeat(15).split_at(162).0);
        let code = qr(&secret);
        assert_eq!(code.error_correction_level(), EcLevel::M);
        assert_eq!(code.version(), Version::Normal(7));
        assert_eq!(code.width(), 45);
    }

    #[test]
    fn a_json_secret_is_coded_in_byte_mode_at_level_m() {
        let secret = format!("bx1.{}.{}", "e".repeat(220), "s".repeat(86));
        let code = qr(&secret);
        assert_eq!(code.error_correction_level(), EcLevel::M);
        // 314 bytes in byte mode at level M: version 13 holds 331, version 12 only 287.
        assert_eq!(code.version(), Version::Normal(13));
        assert!(qr_svg(&secret).starts_with("<?xml"));
    }

    #[test]
    fn prices_print_with_their_currencys_sign_or_code() {
        assert_eq!(price(4500, "EUR"), "€45.00");
        assert_eq!(price(950, "GBP"), "£9.50");
        assert_eq!(price(5, "USD"), "$0.05");
        assert_eq!(price(3000, "CHF"), "CHF 30.00");
        assert_eq!(price(-250, "EUR"), "-€2.50");
    }

    #[test]
    fn text_outside_latin_1_is_replaced_not_dropped() {
        assert_eq!(win_ansi("Café – 5€ 猫"), b"Caf\xe9 \x96 5\x80 ?".to_vec());
    }

    #[test]
    fn a_pdf_has_a_page_per_ticket() {
        let page = |label| Page {
            event: "Gala",
            starts_at: Utc::now(),
            time_zone: "Europe/Berlin",
            venue: "Hall",
            label,
            ticket_type: "Standard",
            ticket_id: uuid::Uuid::new_v4(),
            order: Some(uuid::Uuid::new_v4()),
            price: price(4500, "EUR"),
            secret: "bx1.abc.def",
            code: "7KQF-2M9X-PD",
        };
        let bytes = pdf(&[page("A 1"), page("A 2"), page("A 3")]);
        assert!(bytes.starts_with(b"%PDF-"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("/Count 3"), "{text}");
    }
}
