//! User administration through `Session::run`: each command's effect on the shared user store,
//! Neo4j's refusals with their status codes, the "password change required" gate, and the file
//! written by a store attached from disk.

use arbor_engine::{
    AccessMode, CurrentUser, Database, Login, PropertyMap, PullOutcome, Session, Status, TxConfig,
    UserStore, Value,
};

fn system() -> TxConfig {
    TxConfig { database: Some("system".into()), mode: AccessMode::Write, ..TxConfig::default() }
}

/// Runs `text` on `system` and returns (columns, rows, system updates).
fn run(s: &mut Session, text: &str) -> arbor_engine::Result<(Vec<String>, Vec<Vec<Value>>, u64)> {
    run_with(s, text, PropertyMap::new())
}

fn run_with(
    s: &mut Session,
    text: &str,
    params: PropertyMap,
) -> arbor_engine::Result<(Vec<String>, Vec<Vec<Value>>, u64)> {
    let info = s.run(text, params, system())?;
    let mut rows = Vec::new();
    let outcome = s.pull(None, -1, &mut |r| {
        rows.push(r.into_iter().map(arbor_engine::Value::from).collect::<Vec<_>>());
        Ok(())
    })?;
    let PullOutcome::Done(summary) = outcome else { panic!("not done") };
    Ok((info.fields, rows, summary.stats.system_updates))
}

fn err(s: &mut Session, text: &str) -> (Status, String) {
    let e = run(s, text).expect_err(text);
    (e.status, e.message)
}

fn logged_in(db: &Database, name: &str, change: bool) -> Session {
    let mut s = db.session();
    s.set_user(Some(CurrentUser { name: name.into(), password_change_required: change }));
    s
}

#[test]
fn commands_change_the_shared_store() {
    let db = Database::in_memory();
    let store = UserStore::in_memory();
    db.attach_users(store.clone());
    let mut s = db.session();
    let stmt = "CREATE OR REPLACE USER troygreene SET PASSWORD 'foobarbaz' CHANGE NOT REQUIRED";
    let (cols, rows, updates) = run(&mut s, stmt).unwrap();
    assert!(cols.is_empty() && rows.is_empty());
    assert_eq!(updates, 1);
    assert_eq!(
        store.login("troygreene", "foobarbaz"),
        Login::Accepted { password_change_required: false }
    );
    // Replacing counts as a drop and a create, as in Neo4j.
    assert_eq!(run(&mut s, stmt).unwrap().2, 2);

    run(&mut s, "CREATE USER bob SET PASSWORD 'bob-password'").unwrap();
    assert_eq!(
        store.login("bob", "bob-password"),
        Login::Accepted { password_change_required: true }
    );
    run(&mut s, "ALTER USER bob SET PASSWORD CHANGE NOT REQUIRED SET STATUS SUSPENDED").unwrap();
    assert_eq!(store.login("bob", "bob-password"), Login::Rejected);
    run(&mut s, "ALTER USER bob SET STATUS ACTIVE SET HOME DATABASE neo4j").unwrap();
    run(&mut s, "RENAME USER bob TO robert").unwrap();
    assert!(store.get("bob").is_none());
    assert_eq!(store.get("robert").unwrap().home_database.as_deref(), Some("neo4j"));

    let (cols, rows, updates) = run(&mut s, "SHOW USERS").unwrap();
    assert_eq!(cols, ["user", "roles", "passwordChangeRequired", "suspended", "home"]);
    assert_eq!(updates, 0);
    assert_eq!(
        format!("{rows:?}"),
        format!(
            "{:?}",
            vec![
                vec![
                    Value::str("robert"),
                    Value::Null,
                    Value::Bool(false),
                    Value::Bool(false),
                    Value::str("neo4j")
                ],
                vec![
                    Value::str("troygreene"),
                    Value::Null,
                    Value::Bool(false),
                    Value::Bool(false),
                    Value::Null
                ],
            ]
        )
    );
    let (cols, rows, _) =
        run(&mut s, "SHOW USERS YIELD home, user WHERE home IS NULL RETURN user").unwrap();
    assert_eq!(cols, ["user"]);
    assert_eq!(format!("{rows:?}"), format!("{:?}", vec![vec![Value::str("troygreene")]]));

    let mut params = PropertyMap::new();
    params.insert("name".into(), Value::str("robert"));
    let (_, _, updates) = run_with(&mut s, "DROP USER $name", params).unwrap();
    assert_eq!(updates, 1);
    let (_, _, updates) = run(&mut s, "DROP USER robert IF EXISTS").unwrap();
    assert_eq!(updates, 0);
    assert_eq!(store.users().len(), 1);
}

#[test]
fn refusals_have_neo4j_codes() {
    let db = Database::in_memory();
    let mut admin = logged_in(&db, "admin", false);
    db.users().set_password("admin", "admin-password").unwrap();
    run(&mut admin, "CREATE USER dup SET PASSWORD 'dup-password'").unwrap();
    let arg = Status::ArgumentError;
    let cases: &[(&str, Status, &str)] = &[
        ("CREATE USER dup SET PASSWORD 'dup-password'", arg, "Failed to create the specified user 'dup': User already exists."),
        ("DROP USER ghost", arg, "Failed to delete the specified user 'ghost': User does not exist."),
        ("DROP USER admin", arg, "Failed to delete the specified user 'admin': Deleting yourself is not allowed."),
        ("CREATE USER x SET PASSWORD ''", arg, "A password cannot be empty."),
        ("CREATE USER x SET PASSWORD 'seven77'", arg, "A password must be at least 8 characters."),
        ("ALTER USER dup SET PASSWORD 'dup-password'", arg, "Failed to alter the specified user 'dup': Old password and new password cannot be the same."),
        ("ALTER USER admin SET STATUS SUSPENDED", arg, "Failed to alter the specified user 'admin': Changing your own activation status is not allowed."),
        ("RENAME USER dup TO admin", arg, "Failed to rename the specified user 'dup' to 'admin': User 'admin' already exists."),
        ("ALTER CURRENT USER SET PASSWORD FROM 'nope-nope' TO 'new-password'", arg, "User 'admin' failed to alter their own password: Invalid principal or credentials."),
        ("CREATE USER `a:b` SET PASSWORD 'long-enough'", arg, "Username 'a:b' contains illegal characters.\nUse ascii characters that are not ',', ':' or whitespaces."),
        ("CREATE USER x SET PASSWORD $pw", Status::ParameterMissing, "Expected parameter(s): pw"),
    ];
    for (text, status, message) in cases {
        assert_eq!(err(&mut admin, text), (*status, message.to_string()), "{text}");
    }
    let (status, message) = err(&mut admin, "CREATE USER x SET ENCRYPTED PASSWORD '1,ab12,cd34'");
    assert_eq!(status, arg);
    assert!(message.contains("not supported"), "{message}");
    // An Arbor argon2id hash is accepted as an encrypted password.
    let hash = arbor_engine::hash_password("hashed-password").unwrap();
    run(&mut admin, &format!("CREATE USER h SET ENCRYPTED PASSWORD '{hash}' CHANGE NOT REQUIRED"))
        .unwrap();
    assert_eq!(
        db.users().login("h", "hashed-password"),
        Login::Accepted { password_change_required: false }
    );

    // Without a logged-in user (auth disabled) there is no current user.
    let mut anonymous = db.session();
    assert_eq!(
        err(&mut anonymous, "ALTER CURRENT USER SET PASSWORD FROM 'a-password' TO 'b-password'"),
        (
            Status::ExecutionFailed,
            "User failed to alter their own password: Command not available with auth disabled."
                .to_string()
        )
    );
    assert!(run(&mut anonymous, "SHOW CURRENT USER").unwrap().1.is_empty());
    assert_eq!(err(&mut anonymous, "CALL dbms.showCurrentUser()").0, Status::ProcedureNotFound);
}

#[test]
fn password_change_required_gates_the_session() {
    let db = Database::in_memory();
    db.users().set_password("bootstrap", "bootstrap-pw").unwrap();
    let mut admin = logged_in(&db, "bootstrap", false);
    run(&mut admin, "CREATE USER newbie SET PASSWORD 'first-password'").unwrap();
    let mut s = logged_in(&db, "newbie", true);
    let e = s.run("RETURN 1", PropertyMap::new(), TxConfig::default()).unwrap_err();
    assert_eq!(e.status, Status::CredentialsExpired);
    assert!(e.message.starts_with("ACCESS on database 'neo4j' is not allowed."), "{}", e.message);
    let (status, message) = err(&mut s, "SHOW CURRENT USER");
    assert_eq!(status, Status::CredentialsExpired);
    assert!(message.starts_with("Permission denied."), "{message}");
    run(&mut s, "ALTER CURRENT USER SET PASSWORD FROM 'first-password' TO 'second-password'")
        .unwrap();
    assert_eq!(
        db.users().login("newbie", "second-password"),
        Login::Accepted { password_change_required: false }
    );
    // As in Neo4j, the session stays restricted until the user logs in again.
    assert_eq!(err(&mut s, "SHOW USERS").0, Status::CredentialsExpired);
    let mut again = logged_in(&db, "newbie", false);
    let (cols, rows, _) = run(&mut again, "CALL dbms.showCurrentUser()").unwrap();
    assert_eq!(cols, ["username", "roles", "flags"]);
    let expected = vec![vec![Value::str("newbie"), Value::Null, Value::List(vec![])]];
    assert_eq!(format!("{rows:?}"), format!("{expected:?}"));
}

#[test]
fn attached_file_store_is_written_atomically_and_reread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.toml");
    let db = Database::in_memory();
    db.attach_users(UserStore::open(&path).unwrap());
    let mut s = db.session();
    run(&mut s, "CREATE USER keeper SET PASSWORD 'keeper-password' SET STATUS SUSPENDED").unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("[users.keeper]") && text.contains("suspended = true"), "{text}");
    assert!(!text.contains("keeper-password"));
    assert!(!dir.path().join("auth.toml.tmp").exists());
    let reopened = UserStore::open(&path).unwrap();
    let user = reopened.get("keeper").unwrap();
    assert!(user.suspended && user.password_change_required);
    // A refused command leaves the file alone.
    let before = std::fs::read_to_string(&path).unwrap();
    assert!(run(&mut s, "CREATE USER keeper SET PASSWORD 'keeper-password'").is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}
