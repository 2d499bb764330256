//! A TCP proxy in front of Postgres whose link a test can cut and restore, to see what the
//! server does when its database goes away.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A proxy to one upstream address.
pub struct ChaosProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    broken: Arc<AtomicBool>,
    stalled: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl ChaosProxy {
    /// Starts a proxy to `upstream` on a free local port.
    pub async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let broken = Arc::new(AtomicBool::new(false));
        let stalled = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let broken = broken.clone();
            let stalled = stalled.clone();
            let links = links.clone();
            async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    if broken.load(Ordering::SeqCst) {
                        // Refuse: close at once, as a dead server's port would.
                        drop(client);
                        continue;
                    }
                    let stall = stalled.load(Ordering::SeqCst);
                    let link = tokio::spawn(async move {
                        if stall {
                            // Accept and never answer, as a hung server would.
                            std::future::pending::<()>().await;
                        }
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    links.lock().unwrap().push(link);
                }
            }
        });
        Self {
            addr,
            broken,
            stalled,
            links,
            accept,
        }
    }

    /// Cuts every open connection and refuses new ones.
    pub fn break_link(&self) {
        self.broken.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// Cuts every open connection and accepts new ones without ever answering.
    pub fn stall_link(&self) {
        self.stalled.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// Lets connections through again.
    pub fn restore_link(&self) {
        self.broken.store(false, Ordering::SeqCst);
        self.stalled.store(false, Ordering::SeqCst);
    }
}

impl Drop for ChaosProxy {
    fn drop(&mut self) {
        self.accept.abort();
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }
}

/// The Postgres server the tests use, as a socket address for the proxy.
pub async fn postgres_addr() -> SocketAddr {
    let url = crate::helpers::server_url();
    let host_port = url
        .rsplit('@')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    tokio::net::lookup_host(host_port)
        .await
        .unwrap()
        .next()
        .unwrap()
}
