//! User administration commands: `CREATE [OR REPLACE] USER`, `ALTER USER`, `ALTER CURRENT USER`,
//! `RENAME USER`, `DROP USER`, `SHOW USERS` and `SHOW CURRENT USER`, and transaction management:
//! `SHOW TRANSACTIONS` and `TERMINATE TRANSACTIONS` (Neo4j 5 syntax).
//!
//! [`Parser::admin_command`] looks at the first words only and answers `None` for anything else,
//! so the statement dispatcher can try it first without disturbing queries or schema commands.

use crate::ast::Statement;
use crate::ast_admin::{AdminCommand, Argument, PasswordSpec, UserSettings};
use crate::lexer::Tok;

use super::{PResult, Parser};

impl Parser<'_> {
    /// Parses a user administration command if the statement starts like one.
    pub(crate) fn admin_command(&mut self) -> PResult<Option<Statement>> {
        let user_at = |p: &Self, n: usize| p.is_kw_n(n, "USER") || p.is_kw_n(n, "USERS");
        let tx_at = |p: &Self| p.is_kw_n(1, "TRANSACTION") || p.is_kw_n(1, "TRANSACTIONS");
        let cmd = if self.is_kw("SHOW") && (user_at(self, 1) || self.is_kw_n(1, "CURRENT")) {
            self.show_users()?
        } else if (self.is_kw("SHOW") || self.is_kw("TERMINATE")) && tx_at(self) {
            self.transactions_command()?
        } else if self.is_kw("CREATE")
            && (self.is_kw_n(1, "USER")
                || (self.is_kw_n(1, "OR") && self.is_kw_n(2, "REPLACE") && self.is_kw_n(3, "USER")))
        {
            self.create_user()?
        } else if self.is_kw("ALTER") {
            self.alter_user()?
        } else if self.is_kw("RENAME") && self.is_kw_n(1, "USER") {
            self.rename_user()?
        } else if self.is_kw("DROP") && self.is_kw_n(1, "USER") {
            self.bump();
            self.bump();
            let name = self.user_name()?;
            let if_exists = self.user_if_exists()?;
            AdminCommand::DropUser { name, if_exists }
        } else {
            return Ok(None);
        };
        Ok(Some(Statement::Admin(cmd)))
    }

    fn show_users(&mut self) -> PResult<AdminCommand> {
        self.bump(); // SHOW
        let current = self.eat_kw("CURRENT");
        // `SHOW USER` and `SHOW USERS` are the same; `SHOW CURRENT USER` is singular only.
        if current || !self.eat_kw("USERS") {
            self.expect_kw("USER")?;
        }
        let (mut yield_, mut where_, mut then) = (None, None, Vec::new());
        if self.eat_kw("YIELD") {
            let (spec, paging) = self.yield_spec(true)?;
            yield_ = Some(spec);
            then.extend(paging);
            while self.at_clause_start() {
                then.push(self.clause()?);
            }
        } else if self.eat_kw("WHERE") {
            where_ = Some(self.expr()?);
        }
        Ok(AdminCommand::ShowUsers { current, yield_, where_, then })
    }

    fn transactions_command(&mut self) -> PResult<AdminCommand> {
        let terminate = self.is_kw("TERMINATE");
        self.bump(); // SHOW | TERMINATE
        self.bump(); // TRANSACTION[S]
        let mut ids = Vec::new();
        if matches!(self.peek(), Tok::Str(_) | Tok::Param(_)) {
            ids.push(self.secret()?);
            while self.is_sym(",") {
                self.bump();
                ids.push(self.secret()?);
            }
        } else if terminate {
            return Err(self.unexpected("a string or a parameter"));
        }
        let (mut yield_, mut where_, mut then) = (None, None, Vec::new());
        if self.eat_kw("YIELD") {
            let (spec, paging) = self.yield_spec(true)?;
            yield_ = Some(spec);
            then.extend(paging);
            while self.at_clause_start() {
                then.push(self.clause()?);
            }
        } else if self.eat_kw("WHERE") {
            where_ = Some(self.expr()?);
        }
        Ok(if terminate {
            AdminCommand::TerminateTransactions { ids, yield_, where_, then }
        } else {
            AdminCommand::ShowTransactions { ids, yield_, where_, then }
        })
    }

    fn create_user(&mut self) -> PResult<AdminCommand> {
        let start = self.cur_span().start;
        self.bump(); // CREATE
        let or_replace = self.eat_kw("OR");
        if or_replace {
            self.expect_kw("REPLACE")?;
        }
        self.expect_kw("USER")?;
        let name = self.user_name()?;
        let if_not_exists = if self.eat_kw("IF") {
            self.expect_kw("NOT")?;
            self.expect_kw("EXISTS")?;
            true
        } else {
            false
        };
        if or_replace && if_not_exists {
            return Err(self.error_at(
                start,
                &format!(
                    "Failed to create the specified user '{}': cannot have both `OR REPLACE` \
                     and `IF NOT EXISTS`.",
                    shown(&name)
                ),
            ));
        }
        let settings = self.user_settings(false)?;
        if settings.password.is_none() {
            return Err(self.unexpected("SET PASSWORD (CREATE USER needs a password)"));
        }
        Ok(AdminCommand::CreateUser { name, or_replace, if_not_exists, settings })
    }

    fn alter_user(&mut self) -> PResult<AdminCommand> {
        let start = self.cur_span().start;
        self.bump(); // ALTER
        if self.eat_kw("CURRENT") {
            self.expect_kw("USER")?;
            self.expect_kw("SET")?;
            self.expect_kw("PASSWORD")?;
            self.expect_kw("FROM")?;
            let old = self.secret()?;
            self.expect_kw("TO")?;
            let new = self.secret()?;
            return Ok(AdminCommand::AlterCurrentUser { old, new });
        }
        self.expect_kw("USER")?;
        let name = self.user_name()?;
        let if_exists = self.user_if_exists()?;
        let settings = self.user_settings(true)?;
        if settings == UserSettings::default() {
            return Err(self.error_at(start, "`ALTER USER` requires at least one clause."));
        }
        Ok(AdminCommand::AlterUser { name, if_exists, settings })
    }

    fn rename_user(&mut self) -> PResult<AdminCommand> {
        self.bump(); // RENAME
        self.bump(); // USER
        let from = self.user_name()?;
        let if_exists = self.user_if_exists()?;
        self.expect_kw("TO")?;
        let to = self.user_name()?;
        Ok(AdminCommand::RenameUser { from, to, if_exists })
    }

    fn user_if_exists(&mut self) -> PResult<bool> {
        if self.eat_kw("IF") {
            self.expect_kw("EXISTS")?;
            return Ok(true);
        }
        Ok(false)
    }

    /// The `SET ...` / `REMOVE HOME DATABASE` clauses, each at most once, in any order.
    fn user_settings(&mut self, alter: bool) -> PResult<UserSettings> {
        let mut s = UserSettings::default();
        loop {
            let at = self.cur_span().start;
            if alter && self.eat_kw("REMOVE") {
                self.expect_kw("HOME")?;
                self.expect_kw("DATABASE")?;
                if s.home.is_some() {
                    return Err(self.error_at(at, "Duplicate SET HOME DATABASE clause"));
                }
                s.home = Some(None);
            } else if self.eat_kw("SET") {
                self.set_clause(&mut s)?;
            } else {
                return Ok(s);
            }
        }
    }

    /// One `SET` clause after the keyword.
    fn set_clause(&mut self, s: &mut UserSettings) -> PResult<()> {
        let at = self.cur_span().start;
        let duplicate =
            |p: &Self, what: &str| p.error_at(at, &format!("Duplicate SET {what} clause"));
        if self.eat_kw("STATUS") {
            if s.suspended.is_some() {
                return Err(duplicate(self, "STATUS"));
            }
            s.suspended = Some(if self.eat_kw("SUSPENDED") {
                true
            } else {
                self.expect_kw("ACTIVE")?;
                false
            });
            return Ok(());
        }
        if self.eat_kw("HOME") {
            self.expect_kw("DATABASE")?;
            if s.home.is_some() {
                return Err(duplicate(self, "HOME DATABASE"));
            }
            s.home = Some(Some(self.database_name()?));
            return Ok(());
        }
        let encrypted = self.eat_kw("ENCRYPTED");
        let plaintext = !encrypted && self.eat_kw("PLAINTEXT");
        self.expect_kw("PASSWORD")?;
        if !encrypted && !plaintext && self.is_kw("CHANGE") {
            if s.change_required.is_some() {
                return Err(duplicate(self, "PASSWORD CHANGE [NOT] REQUIRED"));
            }
            s.change_required = Some(self.change_required()?);
            return Ok(());
        }
        if s.password.is_some() {
            return Err(duplicate(self, "PASSWORD"));
        }
        s.password = Some(PasswordSpec { encrypted, value: self.secret()? });
        if self.is_kw("CHANGE") {
            if s.change_required.is_some() {
                return Err(duplicate(self, "PASSWORD CHANGE [NOT] REQUIRED"));
            }
            s.change_required = Some(self.change_required()?);
        }
        Ok(())
    }

    /// `CHANGE [NOT] REQUIRED`; true when required.
    fn change_required(&mut self) -> PResult<bool> {
        self.expect_kw("CHANGE")?;
        let not = self.eat_kw("NOT");
        self.expect_kw("REQUIRED")?;
        Ok(!not)
    }

    /// A user name: a symbolic name (backticks allowed) or a `$parameter`.
    fn user_name(&mut self) -> PResult<Argument> {
        if let Tok::Param(p) = self.peek() {
            let p = p.as_str().into();
            self.bump();
            return Ok(Argument::Parameter(p));
        }
        Ok(Argument::Literal(self.ident("a user name or parameter")?.name.to_string()))
    }

    /// A database name (dots allowed: `my.db`) or a `$parameter`.
    fn database_name(&mut self) -> PResult<Argument> {
        if let Tok::Param(p) = self.peek() {
            let p = p.as_str().into();
            self.bump();
            return Ok(Argument::Parameter(p));
        }
        let mut name = self.ident("a database name or parameter")?.name.to_string();
        while self.is_sym(".") && self.is_name_n(1) {
            self.bump();
            name.push('.');
            name.push_str(&self.ident("a database name")?.name);
        }
        Ok(Argument::Literal(name))
    }

    /// A password: a string literal or a `$parameter`.
    fn secret(&mut self) -> PResult<Argument> {
        let arg = match self.peek() {
            Tok::Str(s) => Argument::Literal(s.clone()),
            Tok::Param(p) => Argument::Parameter(p.as_str().into()),
            _ => return Err(self.unexpected("a string or a parameter")),
        };
        self.bump();
        Ok(arg)
    }
}

/// How a name appears in messages: the literal, or `$param`.
fn shown(arg: &Argument) -> String {
    match arg {
        Argument::Literal(s) => s.clone(),
        Argument::Parameter(p) => format!("${p}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::Statement;
    use crate::ast_admin::{AdminCommand, Argument, PasswordSpec, UserSettings};

    fn admin(text: &str) -> AdminCommand {
        match crate::parse(text) {
            Ok(Statement::Admin(cmd)) => cmd,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn error(text: &str) -> String {
        match crate::parse(text) {
            Err(e) => {
                assert_eq!(e.status, arbor_model::Status::SyntaxError, "{text}");
                e.message
            }
            Ok(s) => panic!("{text} parsed: {s:?}"),
        }
    }

    fn lit(s: &str) -> Argument {
        Argument::Literal(s.into())
    }

    #[test]
    fn neomodel_fixture_statement() {
        let cmd =
            admin("CREATE OR REPLACE USER troygreene SET PASSWORD 'foobarbaz' CHANGE NOT REQUIRED");
        assert_eq!(
            cmd,
            AdminCommand::CreateUser {
                name: lit("troygreene"),
                or_replace: true,
                if_not_exists: false,
                settings: UserSettings {
                    password: Some(PasswordSpec { encrypted: false, value: lit("foobarbaz") }),
                    change_required: Some(false),
                    suspended: None,
                    home: None,
                },
            }
        );
    }

    #[test]
    fn create_user_variants() {
        let AdminCommand::CreateUser { name, if_not_exists, settings, .. } = admin(
            "create user $who if not exists set encrypted password $pw \
             set status suspended set home database my.db;",
        ) else {
            panic!()
        };
        assert_eq!(name, Argument::Parameter("who".into()));
        assert!(if_not_exists);
        assert_eq!(
            settings.password,
            Some(PasswordSpec { encrypted: true, value: Argument::Parameter("pw".into()) })
        );
        assert_eq!(settings.change_required, None);
        assert_eq!(settings.suspended, Some(true));
        assert_eq!(settings.home, Some(Some(lit("my.db"))));
        let AdminCommand::CreateUser { settings, .. } =
            admin("CREATE USER `a b` SET PLAINTEXT PASSWORD 'x' CHANGE REQUIRED SET STATUS ACTIVE")
        else {
            panic!()
        };
        assert_eq!(settings.change_required, Some(true));
        assert_eq!(settings.suspended, Some(false));
    }

    #[test]
    fn alter_rename_drop() {
        let AdminCommand::AlterUser { name, if_exists, settings } =
            admin("ALTER USER bob IF EXISTS SET PASSWORD CHANGE NOT REQUIRED REMOVE HOME DATABASE")
        else {
            panic!()
        };
        assert_eq!(name, lit("bob"));
        assert!(if_exists);
        assert_eq!(settings.password, None);
        assert_eq!(settings.change_required, Some(false));
        assert_eq!(settings.home, Some(None));
        assert_eq!(
            admin("ALTER CURRENT USER SET PASSWORD FROM 'old' TO $new"),
            AdminCommand::AlterCurrentUser {
                old: lit("old"),
                new: Argument::Parameter("new".into())
            }
        );
        assert_eq!(
            admin("RENAME USER a IF EXISTS TO b"),
            AdminCommand::RenameUser { from: lit("a"), to: lit("b"), if_exists: true }
        );
        assert_eq!(
            admin("DROP USER a"),
            AdminCommand::DropUser { name: lit("a"), if_exists: false }
        );
    }

    #[test]
    fn show_users_forms() {
        let AdminCommand::ShowUsers { current, yield_, where_, then } =
            admin("SHOW USERS YIELD user ORDER BY user LIMIT 1 RETURN user")
        else {
            panic!()
        };
        assert!(!current);
        assert!(yield_.is_some() && where_.is_none());
        assert_eq!(then.len(), 2, "{then:?}");
        let AdminCommand::ShowUsers { current, where_, .. } =
            admin("SHOW CURRENT USER WHERE passwordChangeRequired")
        else {
            panic!()
        };
        assert!(current && where_.is_some());
        assert!(matches!(admin("SHOW USER"), AdminCommand::ShowUsers { current: false, .. }));
        // Other SHOW and DROP commands are untouched.
        assert!(matches!(crate::parse("SHOW INDEXES"), Ok(Statement::Show(_))));
        assert!(matches!(crate::parse("DROP INDEX i"), Ok(Statement::Schema(_))));
        assert!(matches!(crate::parse("CREATE (user:User)"), Ok(Statement::Query(_))));
    }

    #[test]
    fn transaction_commands() {
        let AdminCommand::ShowTransactions { ids, yield_, where_, .. } = admin("SHOW TRANSACTIONS")
        else {
            panic!()
        };
        assert!(ids.is_empty() && yield_.is_none() && where_.is_none());
        let AdminCommand::ShowTransactions { ids, yield_, then, .. } =
            admin("SHOW TRANSACTION 'neo4j-transaction-1', $t YIELD transactionId AS t RETURN t")
        else {
            panic!()
        };
        assert_eq!(ids, vec![lit("neo4j-transaction-1"), Argument::Parameter("t".into())]);
        assert!(yield_.is_some() && !then.is_empty());
        let AdminCommand::ShowTransactions { where_, .. } =
            admin("SHOW TRANSACTIONS WHERE status = 'Running'")
        else {
            panic!()
        };
        assert!(where_.is_some());
        let AdminCommand::TerminateTransactions { ids, yield_, .. } =
            admin("TERMINATE TRANSACTIONS 'neo4j-transaction-7' YIELD message")
        else {
            panic!()
        };
        assert_eq!(ids, vec![lit("neo4j-transaction-7")]);
        assert!(yield_.is_some());
        assert!(error("TERMINATE TRANSACTIONS").contains("a string or a parameter"));
    }

    #[test]
    fn errors_name_the_problem() {
        let m = error("CREATE OR REPLACE USER x IF NOT EXISTS SET PASSWORD 'p'");
        assert!(m.contains("cannot have both `OR REPLACE` and `IF NOT EXISTS`"), "{m}");
        let m = error("ALTER USER x");
        assert!(m.contains("`ALTER USER` requires at least one clause."), "{m}");
        let m = error("CREATE USER x");
        assert!(m.contains("SET PASSWORD"), "{m}");
        let m = error("CREATE USER x SET PASSWORD 'a' SET PASSWORD 'b'");
        assert!(m.contains("Duplicate SET PASSWORD clause"), "{m}");
        let m = error("CREATE USER x SET PASSWORD 42");
        assert!(m.contains("expected a string or a parameter"), "{m}");
        let m = error("ALTER USER x SET STATUS SLEEPY");
        assert!(m.contains("ACTIVE"), "{m}");
        let m = error("ALTER CURRENT USER SET PASSWORD TO 'x'");
        assert!(m.contains("expected FROM"), "{m}");
        error("DROP USER");
        error("SHOW CURRENT USERS");
    }
}
