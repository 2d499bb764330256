//! Request extractors whose rejections are the API's own problem documents.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap};
use serde::de::DeserializeOwned;
use serde::de::IgnoredAny;
use serde_json::error::Category;

use crate::error::ApiError;

/// A JSON body. Not JSON → 400 `malformed_json`; JSON of the wrong shape → 422
/// `validation_failed` naming the field; too large → 413; not declared JSON → 415.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        read_json(req, state, Controls::None).await.map(Json)
    }
}

/// [`Json`] for a body whose strings may hold line breaks, and no other control character:
/// a PEM key (`POST …/signing-keys`).
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonWithLines<T>(pub T);

impl<T, S> FromRequest<S> for JsonWithLines<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        read_json(req, state, Controls::LineBreaks)
            .await
            .map(JsonWithLines)
    }
}

/// The body of `req`, declared JSON, read and parsed with its strings holding none of the
/// control characters `controls` refuses.
async fn read_json<T: DeserializeOwned, S: Send + Sync>(
    req: Request,
    state: &S,
    controls: Controls,
) -> Result<T, ApiError> {
    if !declares(req.headers(), mime::APPLICATION, mime::JSON) {
        return Err(ApiError::UnsupportedMediaType("application/json"));
    }
    let bytes = Bytes::from_request(req, state).await.map_err(body_error)?;
    parse_json_allowing(&bytes, controls)
}

/// Which control characters a body's strings may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Controls {
    /// None.
    None,
    /// Line breaks (`\n`, `\r`) only.
    LineBreaks,
}

impl Controls {
    fn refuses(self, c: char) -> bool {
        c.is_control() && !(self == Controls::LineBreaks && matches!(c, '\n' | '\r'))
    }
}

/// Whether the request declares a body of type `type_/subtype` (or `type_/…+subtype`).
pub fn declares(headers: &HeaderMap, type_: mime::Name<'_>, subtype: mime::Name<'_>) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime::Mime>().ok())
        .is_some_and(|m| {
            m.type_() == type_ && (m.subtype() == subtype || m.suffix() == Some(subtype))
        })
}

/// The problem for a body that could not be read: 413 past the route's limit, else 400.
pub fn body_error(e: BytesRejection) -> ApiError {
    match e {
        BytesRejection::FailedToBufferBody(inner) if is_length_limit(&inner) => {
            ApiError::PayloadTooLarge
        }
        other => ApiError::MalformedJson(format!("could not read the body: {other}")),
    }
}

fn is_length_limit(e: &axum::extract::rejection::FailedToBufferBody) -> bool {
    matches!(
        e,
        axum::extract::rejection::FailedToBufferBody::LengthLimitError(_)
    )
}

/// Parses a JSON body, sorting syntax errors (400) from shape errors (422, with the path of
/// the offending field). A string holding a control character (a NUL, a newline…) is 422
/// too: no field of the API carries one, and Postgres cannot store a NUL.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    parse_json_allowing(bytes, Controls::None)
}

/// [`parse_json`], its strings holding none of the control characters `controls` refuses.
fn parse_json_allowing<T: DeserializeOwned>(
    bytes: &[u8],
    controls: Controls,
) -> Result<T, ApiError> {
    // Every body this API reads is an object; serde would read a struct whose fields are
    // all optional from `[]` too.
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(bytes) {
            Ok(_) => ApiError::invalid("", "the body must be a JSON object"),
            Err(e) => ApiError::MalformedJson(format!("the body is not valid JSON: {e}")),
        });
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        // serde stops at the first field it cannot use, which may come before the body is
        // cut short: a body that is not JSON as a whole is malformed, whatever came first.
        let syntax = match inner.classify() {
            Category::Data => serde_json::from_slice::<IgnoredAny>(bytes).err(),
            _ => None,
        };
        match (inner.classify(), syntax) {
            (Category::Data, None) => data_error(path, &inner),
            (_, syntax) => ApiError::MalformedJson(format!(
                "the body is not valid JSON: {}",
                syntax.unwrap_or(inner)
            )),
        }
    })?;
    // One JSON value and nothing after it but white space: `{…}{…}` or `{…} xyz` is not a
    // body this server reads as its first value while a proxy in front reads it otherwise.
    de.end()
        .map_err(|e| ApiError::MalformedJson(format!("the body is not valid JSON: {e}")))?;
    if has_escaped_control(bytes, controls) {
        return Err(control_character_error(bytes, controls));
    }
    Ok(value)
}

/// Whether a JSON text (already known to parse) spells a control character in a string. In
/// valid JSON a control character can only appear escaped (`\n`, `\u0000`), and a
/// backslash only inside a string, so one pass over the escapes finds them all.
fn has_escaped_control(bytes: &[u8], controls: Controls) -> bool {
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|&b| b == b'\\') {
        let escape = i + at + 1;
        match bytes.get(escape) {
            Some(b'b' | b'f' | b't') => return true,
            Some(b'n' | b'r') if controls == Controls::None => return true,
            Some(b'u') => {
                let code = bytes
                    .get(escape + 1..escape + 5)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok());
                if code
                    .and_then(char::from_u32)
                    .is_some_and(|c| controls.refuses(c))
                {
                    return true;
                }
            }
            _ => {}
        }
        i = escape + 1;
    }
    false
}

/// The 422 naming the first string (or key) that holds a control character.
fn control_character_error(bytes: &[u8], controls: Controls) -> ApiError {
    let find = |value: &serde_json::Value| find_control(value, String::new(), controls);
    let field = serde_json::from_slice(bytes)
        .ok()
        .and_then(|v| find(&v))
        .unwrap_or_default();
    ApiError::invalid(&field, "must not contain control characters")
}

/// The path of the first string (or key) in `value` holding a control character
/// `controls` refuses.
fn find_control(value: &serde_json::Value, path: String, controls: Controls) -> Option<String> {
    {
        let bad = |s: &str| s.chars().any(|c| controls.refuses(c));
        let find = |v: &serde_json::Value, p: String| find_control(v, p, controls);
        match value {
            serde_json::Value::String(s) => bad(s).then_some(path),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| find(v, format!("{path}[{i}]"))),
            serde_json::Value::Object(fields) => fields.iter().find_map(|(k, v)| {
                let path = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if bad(k) {
                    Some(path)
                } else {
                    find(v, path)
                }
            }),
            _ => None,
        }
    }
}

/// The 422 for JSON of the wrong shape, naming the field (a missing field by its own name).
fn data_error(path: String, inner: &serde_json::Error) -> ApiError {
    let message = strip_position(&inner.to_string());
    let mut field = if path == "." { String::new() } else { path };
    // A missing field is reported at its parent; name the field itself.
    if let Some(missing) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        field = if field.is_empty() {
            missing.to_owned()
        } else {
            format!("{field}.{missing}")
        };
    }
    ApiError::invalid(&field, &message)
}

/// serde_json appends " at line 1 column 42" to data errors; the field path says more.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Body {
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        count: u32,
    }

    #[test]
    fn a_body_that_is_not_an_object_is_refused() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Patch {
            name: Option<String>,
        }
        for body in [&b"[]"[..], b" [ ]", b"null", b"1", b"\"x\""] {
            match parse_json::<Patch>(body) {
                Err(ApiError::Validation(e)) => {
                    assert_eq!(e.0[0].message, "the body must be a JSON object")
                }
                other => panic!("{body:?}: expected a validation error, got {other:?}"),
            }
        }
        assert!(matches!(
            parse_json::<Patch>(b"[1,"),
            Err(ApiError::MalformedJson(_))
        ));
        assert!(parse_json::<Patch>(b" {}").is_ok());
    }

    #[test]
    fn syntax_errors_are_400_and_shape_errors_name_the_field() {
        assert!(matches!(
            parse_json::<Body>(b"{\"items\": ["),
            Err(ApiError::MalformedJson(_))
        ));
        match parse_json::<Body>(br#"{"items": [{"count": 1}, {"count": -1}]}"#) {
            Err(ApiError::Validation(e)) => {
                assert_eq!(e.0[0].field, "items[1].count");
                assert!(!e.0[0].message.contains("line"), "{}", e.0[0].message);
            }
            other => panic!("expected a validation error, got {other:?}"),
        }
        match parse_json::<Body>(b"{}") {
            Err(ApiError::Validation(e)) => assert_eq!(e.0[0].field, "items"),
            other => panic!("expected a validation error, got {other:?}"),
        }
        match parse_json::<Body>(br#"{"items": [{"count": 1, "colour": 2}"#) {
            Err(ApiError::MalformedJson(_)) => {}
            other => panic!("a body cut short is malformed, whatever came first: {other:?}"),
        }
        match parse_json::<Body>(br#"{"items": [{}]}"#) {
            Err(ApiError::Validation(e)) => assert_eq!(e.0[0].field, "items[0].count"),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Named {
        names: Vec<String>,
    }

    #[test]
    fn control_characters_in_strings_are_refused_with_their_field() {
        for body in [
            r#"{"names": ["a", "fl\u0000or"]}"#,
            r#"{"names": ["a", "b\nc"]}"#,
            r#"{"names": ["a", "b\u007F"]}"#,
            r#"{"names": ["a", "b\u009f"]}"#,
        ] {
            match parse_json::<Named>(body.as_bytes()) {
                Err(ApiError::Validation(e)) => assert_eq!(e.0[0].field, "names[1]", "{body}"),
                other => panic!("{body}: expected a validation error, got {other:?}"),
            }
        }
        // An escaped backslash followed by a letter is text, not a control character.
        let ok = parse_json::<Named>(br#"{"names": ["C:\\new", "\u00e9", "\"quoted\""]}"#)
            .expect("no control character");
        assert_eq!(ok.names, ["C:\\new", "é", "\"quoted\""]);
    }

    #[test]
    fn a_body_with_lines_takes_line_breaks_and_no_other_control_character() {
        let pem = br#"{"names": ["-----BEGIN PUBLIC KEY-----\nMCowBQ\r\n\u000a-----END PUBLIC KEY-----\n"]}"#;
        let read: Named = parse_json_allowing(pem, Controls::LineBreaks).expect("line breaks");
        assert_eq!(read.names[0].lines().count(), 4);
        assert!(parse_json::<Named>(pem).is_err());
        for body in [r#"{"names": ["a\tb"]}"#, r#"{"names": ["a\u0000"]}"#] {
            match parse_json_allowing::<Named>(body.as_bytes(), Controls::LineBreaks) {
                Err(ApiError::Validation(e)) => assert_eq!(e.0[0].field, "names[0]", "{body}"),
                other => panic!("{body}: expected a validation error, got {other:?}"),
            }
        }
    }
}

/// The `Boxoffice-Pass` header: the waiting-room pass a buyer shows to hold and book while
/// an event's queue is on. Absent (or not text) is `None`; the pass itself is checked by
/// [`boxoffice_service::queue::admit`], which knows the event.
#[derive(Debug, Clone, Default)]
pub struct PassHeader(pub Option<String>);

/// The header's name.
pub const PASS_HEADER: &str = "boxoffice-pass";

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for PassHeader {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .headers
                .get(PASS_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        ))
    }
}
