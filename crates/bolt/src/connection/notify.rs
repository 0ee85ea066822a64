//! The client's notification settings (`NotificationFilter`, from HELLO and per transaction)
//! and the category Neo4j gives a notification code: a leaf below the connection state and the
//! streaming of summaries, which both use them.

use arbor_engine::Notification;
use arbor_model::{PropertyMap, Value};

/// Which notifications the client asked for (`notifications_minimum_severity` and
/// `notifications_disabled_classifications`, or its pre-5.6 name `..._categories`), from HELLO,
/// overridden per transaction by BEGIN or an auto-commit RUN.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct NotificationFilter {
    /// `OFF`, `WARNING` or `INFORMATION`; `None` = server default (everything).
    min_severity: Option<String>,
    disabled: Option<Vec<String>>,
}

impl NotificationFilter {
    pub(super) fn from_extra(extra: &PropertyMap) -> NotificationFilter {
        let min_severity = match extra.get("notifications_minimum_severity") {
            Some(Value::String(s)) => Some(s.to_uppercase()),
            _ => None,
        };
        let list = extra
            .get("notifications_disabled_classifications")
            .or_else(|| extra.get("notifications_disabled_categories"));
        let disabled = match list {
            Some(Value::List(items)) => Some(
                items
                    .iter()
                    .filter_map(|v| match v {
                        Value::String(s) => Some(s.to_uppercase()),
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        };
        NotificationFilter { min_severity, disabled }
    }

    /// `other`'s settings where it has them, ours elsewhere.
    pub(super) fn overlay(&self, other: NotificationFilter) -> NotificationFilter {
        NotificationFilter {
            min_severity: other.min_severity.or_else(|| self.min_severity.clone()),
            disabled: other.disabled.or_else(|| self.disabled.clone()),
        }
    }

    pub(super) fn allows(&self, n: &Notification) -> bool {
        match self.min_severity.as_deref() {
            Some("OFF") => return false,
            Some("WARNING") if !n.severity.eq_ignore_ascii_case("WARNING") => return false,
            _ => {}
        }
        match &self.disabled {
            Some(d) => !d.iter().any(|c| c == notification_category(&n.code)),
            None => true,
        }
    }
}

/// The notification category (5.6+: classification) Neo4j would give this code.
pub(super) fn notification_category(code: &str) -> &'static str {
    if code.contains("CartesianProduct") || code.contains("Eager") || code.contains("Performance") {
        "PERFORMANCE"
    } else if code.contains("Unknown") || code.contains("Missing") {
        "UNRECOGNIZED"
    } else if code.contains("Deprecat") {
        "DEPRECATION"
    } else if code.contains("Hint") {
        "HINT"
    } else {
        "GENERIC"
    }
}
