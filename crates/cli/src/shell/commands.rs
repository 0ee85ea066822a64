//! The shell's `:` commands, as cypher-shell names them.

use std::io::Write;

use arbor_model::{Error, PropertyMap, Status, Value};

use super::Shell;

const HELP: &str = "\
Available commands:
  :begin     Open a transaction
  :commit    Commit the currently open transaction
  :rollback  Rollback the currently open transaction
  :param     Set the value of a query parameter (:param name => expression, or :param {a: 1})
  :params    Print all query parameters (:params clear removes them)
  :use       Set the active database (:use name; without a name: the default database)
  :help      Show this help message
  :exit      Exit the shell (also :quit)

Cypher statements end with a semicolon.";

fn usage(message: &str) -> Error {
    Error::new(Status::RequestInvalid, message.to_string())
}

fn io(e: std::io::Error) -> Error {
    Error::new(Status::Io, e.to_string())
}

impl Shell {
    /// Runs one `:` command line.
    pub(crate) fn command(&mut self, line: &str, out: &mut impl Write) -> Result<(), Error> {
        let (name, rest) = match line.split_once(char::is_whitespace) {
            Some((n, r)) => (n, r.trim()),
            None => (line, ""),
        };
        match name {
            ":help" => writeln!(out, "{HELP}").map_err(io),
            ":exit" | ":quit" => Ok(()),
            ":begin" => {
                if self.in_tx {
                    return Err(usage("There is already an open transaction"));
                }
                self.backend.begin()?;
                self.in_tx = true;
                Ok(())
            }
            ":commit" => {
                if !self.in_tx {
                    return Err(usage("There is no open transaction to commit"));
                }
                self.in_tx = false;
                self.backend.commit()
            }
            ":rollback" => {
                if !self.in_tx {
                    return Err(usage("There is no open transaction to rollback"));
                }
                self.in_tx = false;
                self.backend.rollback()
            }
            ":use" => {
                if self.in_tx {
                    return Err(usage("There is an open transaction. You need to close it before you can switch database."));
                }
                let db = rest.trim_end_matches(';').trim().trim_matches('`');
                self.backend.use_database((!db.is_empty()).then(|| db.to_string()));
                Ok(())
            }
            ":param" | ":params" => self.param(rest, out),
            other => Err(usage(&format!(
                "Could not find command {other}, use :help to see available commands"
            ))),
        }
    }

    /// `:param name => expr`, `:param {map}`, `:param clear`, `:params [clear]`.
    fn param(&mut self, rest: &str, out: &mut impl Write) -> Result<(), Error> {
        let rest = rest.trim_end_matches(';').trim();
        if rest == "clear" {
            self.params = PropertyMap::new();
            return Ok(());
        }
        if rest.is_empty() {
            return writeln!(out, "{}", super::format::value(&Value::Map(self.params.clone())))
                .map_err(io);
        }
        if rest.starts_with('{') {
            match self.evaluate(rest)? {
                Value::Map(m) => {
                    for (k, v) in m.iter() {
                        self.params.insert(k.clone(), v.clone());
                    }
                    Ok(())
                }
                other => Err(usage(&format!(
                    "Incorrect usage.\nusage: :param {{a: 1}} or :param a => 1 (got a {})",
                    other.type_name()
                ))),
            }
        } else if let Some((key, expr)) = rest.split_once("=>") {
            let key = key.trim().trim_matches('`');
            if key.is_empty() {
                return Err(usage("Incorrect usage.\nusage: :param name => expression"));
            }
            let v = self.evaluate(expr.trim())?;
            self.params.insert(key.into(), v);
            Ok(())
        } else {
            Err(usage("Incorrect usage.\nusage: :param {a: 1} or :param name => expression"))
        }
    }

    /// Evaluates a parameter expression on the server (it may refer to earlier parameters).
    fn evaluate(&mut self, expr: &str) -> Result<Value, Error> {
        let outcome = self.backend.run(&format!("RETURN {expr} AS value"), &self.params)?;
        Ok(outcome
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null))
    }
}
