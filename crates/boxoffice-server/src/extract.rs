//! Request extractors whose rejections are the API's own problem documents.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use serde::de::DeserializeOwned;
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
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<mime::Mime>().ok())
            .is_some_and(|m| {
                m.type_() == mime::APPLICATION
                    && (m.subtype() == mime::JSON || m.suffix() == Some(mime::JSON))
            });
        if !is_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| match e {
            BytesRejection::FailedToBufferBody(inner) if is_length_limit(&inner) => {
                ApiError::PayloadTooLarge
            }
            other => ApiError::MalformedJson(format!("could not read the body: {other}")),
        })?;
        parse_json(&bytes).map(Json)
    }
}

fn is_length_limit(e: &axum::extract::rejection::FailedToBufferBody) -> bool {
    matches!(
        e,
        axum::extract::rejection::FailedToBufferBody::LengthLimitError(_)
    )
}

/// Parses a JSON body, sorting syntax errors (400) from shape errors (422, with the path of
/// the offending field).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        match inner.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                ApiError::MalformedJson(format!("the body is not valid JSON: {inner}"))
            }
            Category::Data => {
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
        }
    })
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
        match parse_json::<Body>(br#"{"items": [{}]}"#) {
            Err(ApiError::Validation(e)) => assert_eq!(e.0[0].field, "items[0].count"),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }
}
