//! Connection setup: `HELLO`, `LOGON` and checking the auth token against the user store.

use arbor_engine::{CurrentUser, Login};
use arbor_model::{Error, PropertyMap, Result, Status, Value};
use tracing::{debug, warn};

use super::*;
use crate::handshake::Version;

impl<B: Backend> Conn<B> {
    pub(super) fn hello(&mut self, extra: PropertyMap) -> Flow {
        self.hello_filter = NotificationFilter::from_extra(&extra);
        if let Some(Value::String(agent)) = extra.get("user_agent") {
            debug!(peer = %self.peer, conn = self.conn_no, "HELLO from {agent}");
        }
        let mut meta = PropertyMap::new();
        meta.insert("server".into(), Value::from(server_agent()));
        meta.insert("connection_id".into(), Value::from(format!("bolt-{}", self.conn_no)));
        // No `connection.recv_timeout_seconds`: we send no NOOPs during long queries, so a
        // driver-side read timeout would cut them off. `ssr.enabled` (5.8+): the server resolves
        // the home database itself (RUN/BEGIN report `db`), so routing drivers need no extra
        // ROUTE round trip per session.
        let mut hints = PropertyMap::new();
        if self.version().at_least(5, 8) {
            hints.insert("ssr.enabled".into(), Value::Bool(true));
        }
        meta.insert("hints".into(), Value::Map(hints));
        if self.negotiated.manifest {
            meta.insert("protocol_version".into(), Value::from(self.version().to_string()));
        }
        // Bolt 4.4 may ask for the 5.0 date-time encoding.
        let wants_utc = self.version() == Version::new(4, 4)
            && matches!(extra.get("patch_bolt"), Some(Value::List(p))
                if p.iter().any(|x| matches!(x, Value::String(s) if &**s == "utc")));
        if wants_utc {
            meta.insert("patch_bolt".into(), Value::List(vec![Value::str("utc")]));
        }
        if self.version().at_least(5, 1) {
            self.state = State::Authentication;
        } else {
            // Before 5.1 the credentials travel in HELLO.
            match self.authenticate(&extra) {
                Ok(user) => self.backend.set_user(user),
                Err(e) => return self.failure(&e),
            }
            self.pre_auth = None;
            self.state = State::Ready;
        }
        let flow = self.success(meta);
        if wants_utc {
            // Acknowledged above; from now on date-times use the UTC encoding.
            self.dialect.utc_datetime = true;
        }
        flow
    }

    pub(super) fn logon(&mut self, auth: PropertyMap) -> Flow {
        match self.authenticate(&auth) {
            Ok(user) => self.backend.set_user(user),
            Err(e) => return self.failure(&e),
        }
        self.pre_auth = None;
        self.state = State::Ready;
        let mut meta = PropertyMap::new();
        if let (true, Some(addr)) = (self.version().at_least(5, 8), &self.shared.advertised_address)
        {
            meta.insert("advertised_address".into(), Value::str(addr));
        }
        self.success(meta)
    }

    /// Checks the auth token; returns who logged in (`None` with authentication disabled).
    pub(super) fn authenticate(&self, token: &PropertyMap) -> Result<Option<CurrentUser>> {
        let scheme = match token.get("scheme") {
            None | Some(Value::Null) => "none",
            Some(Value::String(s)) => s,
            Some(_) => {
                return Err(Error::new(Status::Unauthorized, "The auth scheme must be a String."))
            }
        };
        let Some(store) = &self.shared.auth else {
            // Authentication disabled: every token is accepted, as in Neo4j.
            return Ok(None);
        };
        if scheme != "basic" {
            warn!(peer = %self.peer, "Bolt authentication failed: unsupported scheme '{scheme}'");
            return Err(Error::new(
                Status::Unauthorized,
                format!("Unsupported authentication token, scheme '{scheme}' is not supported."),
            ));
        }
        let principal = match token.get("principal") {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        };
        let credentials = match token.get("credentials") {
            Some(Value::String(s)) => s.to_string(),
            _ => String::new(),
        };
        // A suspended user is rejected like a wrong password. Locked users and a full hashing
        // pool are refused before any hashing.
        let mut change_required = None;
        let address = self.peer.rsplit_once(':').map_or(self.peer.as_str(), |(ip, _)| ip);
        let attempt = self.shared.logins.attempt(&principal, address, || {
            let login = store.login(&principal, &credentials);
            if let Login::Accepted { password_change_required } = login {
                change_required = Some(password_change_required);
            }
            change_required.is_some()
        });
        if let Err(e) = attempt {
            warn!(peer = %self.peer, user = %principal, "Bolt authentication refused: {}", e.message);
            return Err(e);
        }
        if let Some(password_change_required) = change_required {
            debug!(peer = %self.peer, user = %principal, "Bolt authentication succeeded");
            return Ok(Some(CurrentUser { name: principal, password_change_required }));
        }
        warn!(peer = %self.peer, user = %principal, "Bolt authentication failed");
        Err(Error::new(
            Status::Unauthorized,
            "The client is unauthorized due to authentication failure.",
        ))
    }
}
