//! The quick form speaks of its flags: the spec its flags stand for is
//! resolved before anything runs or is written, and an error in it is told
//! as the flag that caused it, not as a line of a spec the user never wrote.

use corobench_engine::EngineError;
use corobench_engine::targets::Targets;
use corobench_target::TargetError;

use super::BenchArgs;
use crate::exit;

/// Resolves `spec` (the flags' spec) as `corobench run` would.
///
/// # Errors
/// A flag whose value the spec refuses, named as the flag (exit 2); a
/// targets folder that cannot be read.
pub(super) fn check(spec: &str, args: &BenchArgs) -> anyhow::Result<()> {
    let mut targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    match targets.resolve(spec, None) {
        Ok(_) => Ok(()),
        Err(error) => Err(in_flags(error)),
    }
}

/// `error` told in the quick form's words, where its key maps to a flag.
fn in_flags(error: EngineError) -> anyhow::Error {
    let (key, message) = match &error {
        EngineError::Spec(spec) => (spec.key.clone(), spec.message.clone()),
        EngineError::SpecServer { name, why } => (Some(format!("servers.{name}")), why.clone()),
        EngineError::Target(target) => match target.as_ref() {
            TargetError::Manifest { key, message, .. } => (Some(key.clone()), message.clone()),
            _ => return error.into(),
        },
        _ => return error.into(),
    };
    match key.as_deref().and_then(flag_of) {
        Some(flag) => exit::usage(format!("{flag}: {message}")),
        None => error.into(),
    }
}

/// `error` with every place in the flags' spec (`PATH:LINE`, `PATH:LINE:COL`)
/// told as the flag that wrote that line: the spec is gone when the error
/// is read, and the user never wrote it. The exit status stays.
pub(super) fn retell(
    error: anyhow::Error,
    spec_path: &std::path::Path,
    spec: &str,
) -> anyhow::Error {
    let text = format!(
        "{}{}",
        exit::chain_text(&error),
        crate::commands::hints::hint(&error)
    );
    let path = spec_path.display().to_string();
    if !text.contains(&path) {
        return error;
    }
    let keys = line_keys(spec);
    let mut told = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&path) {
        told.push_str(&rest[..at]);
        rest = &rest[at + path.len()..];
        let (line, after) = leading_position(rest);
        let flag = line
            .and_then(|line| keys.get(line.wrapping_sub(1)))
            .and_then(|key| flag_of(key));
        told.push_str(&flag.unwrap_or_else(|| "the flags".to_owned()));
        rest = after;
    }
    told.push_str(rest);
    let exit = exit::status_of(&error);
    exit::Failure {
        exit,
        message: told,
    }
    .into()
}

/// The line number in `:LINE` or `:LINE:COL` at the start of `text`, and
/// what follows it.
fn leading_position(text: &str) -> (Option<usize>, &str) {
    let mut rest = text;
    let mut line = None;
    for part in 0..2 {
        let Some(digits) = rest.strip_prefix(':') else {
            break;
        };
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        if end == 0 {
            break;
        }
        if part == 0 {
            line = digits[..end].parse().ok();
        }
        rest = &digits[end..];
    }
    (line, rest)
}

/// The spec key each line of the flags' spec holds (`run.trials`,
/// `servers.api.command`, a table's own name on its header line).
fn line_keys(spec: &str) -> Vec<String> {
    let mut table = String::new();
    spec.lines()
        .map(|line| {
            let line = line.trim();
            if let Some(header) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
                table = format!("{header}[0]");
                return table.clone();
            }
            if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                table = header.to_owned();
                return table.clone();
            }
            match line.split_once(" = ") {
                Some((key, _)) if !table.is_empty() => format!("{table}.{key}"),
                Some((key, _)) => key.to_owned(),
                None => table.clone(),
            }
        })
        .collect()
}

/// The flag that wrote spec key `key` (`run.trials`, `workloads[0].path`,
/// `servers.api.command`), if one did.
fn flag_of(key: &str) -> Option<String> {
    let fixed = [
        ("run.trials", "--trials"),
        ("run.duration", "--duration (-d)"),
        ("run.warmup", "--warmup"),
        ("run.idle", "--idle"),
        ("run.server_cpus", "--server-cpus"),
        ("run.generator_cpus", "--generator-cpus"),
        ("schedule.connections", "--connections (-c)"),
        ("schedule.rates", "--rate (-R)"),
        ("schedule.tls_resume", "--no-tls-resume"),
        ("schedule.tls", "--tls"),
        ("schedule.protocol", "--h2/--h2c"),
        ("schedule.streams", "--streams (-m)"),
        ("targets", "--server"),
    ];
    if let Some((_, flag)) = fixed.iter().find(|(prefix, _)| key.starts_with(prefix)) {
        return Some((*flag).to_owned());
    }
    if let Some(rest) = key.strip_prefix("workloads") {
        let field = rest.rsplit('.').next().unwrap_or_default();
        let flag = match field {
            "path" => "--path",
            "method" => "--method",
            "headers" => "--header (-H)",
            "body" => "--body",
            "expect_status" => "--expect-status",
            "expect_body" => "--expect-body",
            _ => "--path",
        };
        return Some(flag.to_owned());
    }
    let rest = key.strip_prefix("servers.")?;
    let (name, field) = rest.split_once('.').unwrap_or((rest, ""));
    let name = name.trim_matches('"');
    Some(match field {
        "ready" => "--ready".to_owned(),
        "ready_timeout_s" => "--ready-timeout".to_owned(),
        "cwd" => "--cwd".to_owned(),
        "pid" => format!("--pid {name}=…"),
        "process" => format!("--process {name}=…"),
        "ca" => "--ca".to_owned(),
        "insecure" => "--insecure".to_owned(),
        _ => format!("--server {name}=…"),
    })
}

#[cfg(test)]
mod tests {
    use super::flag_of;

    #[test]
    fn spec_keys_are_told_as_the_flags_that_wrote_them() {
        for (key, flag) in [
            ("run.trials", "--trials"),
            ("schedule.connections", "--connections (-c)"),
            ("schedule.rates[0]", "--rate (-R)"),
            ("workloads[0].expect_status", "--expect-status"),
            ("servers.api.command", "--server api=…"),
            ("servers.api.ready_timeout_s", "--ready-timeout"),
            ("servers.live.pid", "--pid live=…"),
        ] {
            assert_eq!(flag_of(key).as_deref(), Some(flag), "{key}");
        }
        assert_eq!(flag_of("claims"), None);
    }

    /// Issue "hostile input, third round", message 1: errors cited
    /// `/tmp/corobench-bench-PID/bench.toml:18`, a spec deleted by then.
    #[test]
    fn places_in_the_flags_spec_are_told_as_flags() {
        let spec = "name = \"bench\"\n[run]\ntrials = 2\n[servers.live]\nurl = \"http://x\"\n";
        let path = std::path::Path::new("/tmp/corobench-bench-1/bench.toml");
        let error = crate::exit::target_failed(
            "/tmp/corobench-bench-1/bench.toml:5 (server live): http://x refuses connections",
        );
        let told = super::retell(error, path, spec);
        assert_eq!(
            told.to_string(),
            "--server live=… (server live): http://x refuses connections"
        );
        assert_eq!(
            crate::exit::status_of(&told),
            crate::exit::Exit::TargetFailed
        );
        let trials = super::retell(
            crate::exit::usage("/tmp/corobench-bench-1/bench.toml:3:10: bad"),
            path,
            spec,
        );
        assert_eq!(trials.to_string(), "--trials: bad");
    }
}
