//! Answers compressed once and kept for repeat loads: the seat map and the layout of
//! recently read events, each per `Accept-Encoding`, while their ETag stands.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderValue;
use boxoffice_core::ids::EventId;
use lru::LruCache;

/// The compressed answers of recently read events, least recently used evicted first.
pub struct EncodedCache(Mutex<LruCache<EventId, Arc<EventAnswers>>>);

/// One event's compressed answers.
#[derive(Default)]
pub struct EventAnswers {
    /// `GET /v1/events/{id}/seats`.
    pub seats: EncodedAnswers,
    /// `GET /v1/events/{id}/layout`.
    pub layout: EncodedAnswers,
}

impl EncodedCache {
    /// A cache of at most `capacity` events.
    pub fn new(capacity: NonZeroUsize) -> Self {
        Self(Mutex::new(LruCache::new(capacity)))
    }

    /// The compressed answers kept for `event` (none yet: an empty set, kept from now on).
    pub fn of(&self, event: EventId) -> Arc<EventAnswers> {
        let mut events = self.0.lock().unwrap_or_else(|p| p.into_inner());
        events.get_or_insert(event, Arc::default).clone()
    }
}

/// An answer body compressed once for repeat loads.
#[derive(Clone, Debug)]
pub struct Encoded {
    /// The encoding chosen (`None`: the client accepts none the server offers).
    pub content_encoding: Option<HeaderValue>,
    /// The body, so encoded.
    pub body: Bytes,
}

/// The compressed answers of one ETag of one resource, by the `Accept-Encoding` they
/// answer; a new ETag replaces them.
#[derive(Default)]
pub struct EncodedAnswers(Mutex<Answers>);

#[derive(Default)]
struct Answers {
    etag: String,
    by_accept: Vec<(HeaderValue, Encoded)>,
}

impl EncodedAnswers {
    /// The answer of `etag` as compressed for `accept` before, if it was kept.
    pub fn get(&self, etag: &str, accept: &HeaderValue) -> Option<Encoded> {
        let answers = self.0.lock().unwrap_or_else(|p| p.into_inner());
        (answers.etag == etag)
            .then(|| answers.by_accept.iter().find(|(a, _)| a == accept))
            .flatten()
            .map(|(_, e)| e.clone())
    }

    /// Keeps the answer of `etag` as compressed for `accept`, forgetting those of any
    /// other ETag (the resource has changed since).
    pub fn keep(&self, etag: &str, accept: HeaderValue, answer: Encoded) {
        let mut answers = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if answers.etag != etag {
            *answers = Answers {
                etag: etag.to_owned(),
                by_accept: Vec::new(),
            };
        }
        if answers.by_accept.len() < ENCODINGS_KEPT
            && !answers.by_accept.iter().any(|(a, _)| *a == accept)
        {
            answers.by_accept.push((accept, answer));
        }
    }
}

/// Distinct `Accept-Encoding` values whose answers are kept: browsers send a handful, and
/// a client inventing new ones only makes the server compress again.
const ENCODINGS_KEPT: usize = 4;
