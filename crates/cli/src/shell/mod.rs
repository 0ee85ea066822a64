//! `arbor shell`: a cypher-shell for Arbor. By default it connects over Bolt (`-a`, `-u`, `-p`,
//! `-d`, as cypher-shell takes them, with the same `NEO4J_*` environment variables); `--data DIR`
//! opens a data directory in process instead. Statements end with `;`; lines starting with `:`
//! are shell commands (`:param`, `:params`, `:begin`, `:commit`, `:rollback`, `:use`, `:help`,
//! `:exit`). Interactive on a terminal (line editing and history), otherwise it reads the
//! statements from `-f FILE`, the query argument or standard input and stops at the first error
//! unless `--fail-at-end`.

mod backend;
mod commands;
mod format;
mod split;

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use arbor_model::{Error, PropertyMap};

use backend::{Backend, BoltBackend, LocalBackend};
pub use format::Format;
use split::{Item, Splitter};

/// Command-line options of `arbor shell` (cypher-shell's names).
#[derive(clap::Args, Debug)]
pub struct ShellArgs {
    /// Bolt address to connect to (env NEO4J_URI or NEO4J_ADDRESS).
    #[arg(short = 'a', long = "address", visible_alias = "uri")]
    address: Option<String>,
    /// User name (env NEO4J_USERNAME). Default: neo4j
    #[arg(short = 'u', long)]
    username: Option<String>,
    /// Password (env NEO4J_PASSWORD); without one the shell logs in with scheme `none`.
    #[arg(short = 'p', long, env = "NEO4J_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Database to use (env NEO4J_DATABASE). Default: the server's default database.
    #[arg(short = 'd', long)]
    database: Option<String>,
    /// Output format: `auto` (verbose on a terminal, else plain), `verbose`, `plain`, `json`, `csv`.
    #[arg(long, value_enum, default_value = "auto")]
    format: Format,
    /// Run the statements in this file, then exit.
    #[arg(short = 'f', long)]
    file: Option<PathBuf>,
    /// A parameter for the statements, as `name => expression` or a map `{a: 1}`; repeatable.
    #[arg(short = 'P', long = "param")]
    params: Vec<String>,
    /// Without a terminal (or with --non-interactive), continue after a failing statement and
    /// exit with status 1 at the end instead of stopping at once.
    #[arg(long)]
    fail_at_end: bool,
    /// Never start the interactive prompt, even on a terminal.
    #[arg(long)]
    non_interactive: bool,
    /// Open this data directory in process instead of connecting over Bolt (nothing else may
    /// have it open).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Run this statement and exit (same as the positional query).
    #[arg(short = 'c', long)]
    command: Option<String>,
    /// A statement to run, then exit (cypher-shell's positional argument).
    query: Option<String>,
}

/// The shell's state between statements.
pub(crate) struct Shell {
    backend: Box<dyn Backend>,
    params: PropertyMap,
    format: Format,
    user: String,
    in_tx: bool,
}

/// Runs the shell; an `Err` means a statement failed (non-interactive) or the connection broke.
pub fn run(args: ShellArgs) -> anyhow::Result<()> {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let script = script_source(&args)?;
    let interactive = script.is_none() && terminal && !args.non_interactive;
    let format = args.format.resolve(interactive || std::io::stdout().is_terminal());
    let user = args
        .username
        .clone()
        .or_else(|| std::env::var("NEO4J_USERNAME").ok())
        .unwrap_or_else(|| "neo4j".into());
    let database = args.database.clone().or_else(|| std::env::var("NEO4J_DATABASE").ok());
    let backend: Box<dyn Backend> = match &args.data {
        Some(dir) => Box::new(LocalBackend::open(dir)?),
        None => {
            let address = args
                .address
                .clone()
                .or_else(|| std::env::var("NEO4J_URI").ok())
                .or_else(|| std::env::var("NEO4J_ADDRESS").ok())
                .unwrap_or_else(|| "bolt://localhost:7687".into());
            Box::new(BoltBackend::connect(
                &address,
                &user,
                args.password.as_deref(),
                database.clone(),
            )?)
        }
    };
    let mut shell = Shell { backend, params: PropertyMap::new(), format, user, in_tx: false };
    if args.data.is_some() {
        shell.backend.use_database(database);
    }
    for p in &args.params {
        shell
            .command(&format!(":param {p}"), &mut std::io::stderr())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let outcome = match script {
        Some(text) => shell.run_script(&text, args.fail_at_end),
        None if interactive => shell.interactive(),
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("reading standard input")?;
            shell.run_script(&text, args.fail_at_end)
        }
    };
    let closed = shell.backend.close();
    outcome.and(closed)
}

/// The statements given by `-f`, `-c` or the positional query, if any.
fn script_source(args: &ShellArgs) -> anyhow::Result<Option<String>> {
    if let Some(path) = &args.file {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return Ok(Some(text));
    }
    Ok(args.command.clone().or_else(|| args.query.clone()))
}

/// An error as the shell prints it: the server's message and its status code.
pub(crate) fn describe_error(e: &Error) -> String {
    if e.message.starts_with("[Neo.") {
        e.message.clone()
    } else {
        format!("{} ({})", e.message, e.status.code())
    }
}

impl Shell {
    /// Runs a whole script; stops at the first failure unless `fail_at_end`.
    fn run_script(&mut self, text: &str, fail_at_end: bool) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        let mut failed = false;
        for item in split::split_all(text) {
            if let Err(e) = self.item(&item, &mut out) {
                out.flush()?;
                eprintln!("{}", describe_error(&e));
                failed = true;
                if !fail_at_end {
                    break;
                }
            }
            if self.quit_requested(&item) {
                break;
            }
        }
        if self.in_tx {
            // cypher-shell rolls back a transaction left open at the end of a script.
            let _ = self.backend.rollback();
        }
        out.flush()?;
        if failed {
            anyhow::bail!("a statement failed");
        }
        Ok(())
    }

    fn quit_requested(&self, item: &Item) -> bool {
        matches!(item, Item::Command(c) if c == ":exit" || c == ":quit")
    }

    /// Runs one statement or command, printing its output.
    fn item(&mut self, item: &Item, out: &mut impl Write) -> Result<(), Error> {
        match item {
            Item::Statement(text) => {
                let outcome = self.backend.run(text, &self.params)?;
                format::print_result(
                    out,
                    self.format,
                    &outcome.fields,
                    &outcome.rows,
                    &outcome.summary,
                )
                .map_err(|e| Error::new(arbor_model::Status::Io, e.to_string()))
            }
            Item::Command(line) => self.command(line, out),
        }
    }

    /// The interactive loop: line editing, history, `user@db>` prompts.
    fn interactive(&mut self) -> anyhow::Result<()> {
        use rustyline::error::ReadlineError;
        let mut editor = rustyline::DefaultEditor::new().context("starting the line editor")?;
        let history =
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".arbor_shell_history"));
        if let Some(h) = &history {
            let _ = editor.load_history(h);
        }
        println!("{}", self.backend.describe());
        println!("Type :help for a list of available commands or :exit to exit the shell.");
        println!("Note that Cypher queries must end with a semicolon.");
        let mut splitter = Splitter::default();
        loop {
            let prompt = self.prompt(splitter.is_idle());
            match editor.readline(&prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    for item in splitter.push_line(&line) {
                        let mut out = std::io::stdout().lock();
                        if let Err(e) = self.item(&item, &mut out) {
                            let _ = out.flush();
                            eprintln!("{}", describe_error(&e));
                        }
                        if self.quit_requested(&item) {
                            return self.leave(&mut editor, history.as_deref());
                        }
                    }
                }
                Err(ReadlineError::Interrupted) => {
                    splitter = Splitter::default();
                }
                Err(ReadlineError::Eof) => return self.leave(&mut editor, history.as_deref()),
                Err(e) => return Err(e).context("reading a line"),
            }
        }
    }

    fn leave(
        &mut self,
        editor: &mut rustyline::DefaultEditor,
        history: Option<&std::path::Path>,
    ) -> anyhow::Result<()> {
        if let Some(h) = history {
            let _ = editor.save_history(h);
        }
        if self.in_tx {
            let _ = self.backend.rollback();
        }
        println!("Bye!");
        Ok(())
    }

    fn prompt(&self, idle: bool) -> String {
        let head = format!("{}@{}", self.user, self.backend.database());
        if idle {
            format!("{head}{} ", if self.in_tx { "#" } else { ">" })
        } else {
            " ".repeat(head.len() + 2)
        }
    }
}
