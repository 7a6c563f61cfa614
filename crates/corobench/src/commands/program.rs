//! `corobench program TARGET`: one run of a program target on this host,
//! its figures printed as one JSON line. It is how a run with `[hosts]`
//! runs a program on a generator host: the coordinator starts it over SSH,
//! beside the program's server served on the server host, and stores the
//! line as a local program trial's result.

use clap::Args;
use corobench_engine::Halt;
use corobench_engine::local::program;
use corobench_engine::serve;
use corobench_engine::targets::Targets;
use corobench_engine::workspace::Workspace;
use corobench_target::{CpuSet, ProgramOptions};

use super::shared::TargetsDirArg;
use crate::exit::{self, Exit};
use crate::{signals, values};

/// Flags of `corobench program`.
#[derive(Debug, Args)]
#[command(
    after_help = "Output on stdout, one JSON object: the program's figures \
    {\"metrics\":[{\"unit\":\"req/s\",\"value\":…},…],\"lines\":[…],\"elapsed_s\":…,\
    \"resources\":{…}} (the result lines it printed in Go benchmark format, one value per \
    unit). Progress goes to stderr.\n\n\
    Exit status: 0 when the program ran to the end and printed its figures, 130 after \
    SIGINT or SIGTERM (the program is stopped with its process tree), 2 for bad flags or \
    a target that is not a program, 3 when it does not build or start, fails, overruns \
    its time limit or prints no or malformed figures.\n\n\
    Examples:\n  \
    corobench program go-fanout-client --server-url http://10.0.0.2:8080 --cpus 0-3\n  \
    ssh bench-client corobench program go-ants-tasks --param tasks=100000"
)]
pub struct ProgramArgs {
    /// The program target to run (see `corobench targets`)
    #[arg(value_name = "TARGET")]
    pub target: String,

    /// A parameter of the target, repeatable: --param requests=1000
    #[arg(long = "param", value_parser = values::parse_parameter, value_name = "NAME=VALUE")]
    pub params: Vec<(String, String)>,

    /// The server the program talks to, as http://HOST:PORT (its
    /// `{server_url}`); required when its target.toml says so
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,

    /// CPUs the program runs on, e.g. 0-1 or 2,3 [default: every CPU]
    #[arg(long, value_name = "LIST", value_parser = values::parse_cpus)]
    pub cpus: Option<CpuSet>,

    #[command(flatten)]
    pub dir: TargetsDirArg,
}

/// Runs `corobench program`.
///
/// # Errors
/// Bad flags, an unknown target or one that is no program (exit 2); a
/// program that does not build, start or finish with its figures (exit 3).
pub fn run(args: &ProgramArgs) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    let targets = Targets::discover(args.dir.targets_dir.as_deref())?;
    targets.select(std::slice::from_ref(&args.target))?;
    let manifest = targets
        .get(&args.target)
        .ok_or_else(|| exit::usage(format!("no target named {:?}", args.target)))?;
    if manifest.program().is_none() {
        return Err(exit::usage(format!(
            "{} is a server target: serve it with `corobench serve`, or name a program target",
            manifest.name
        )));
    }
    serve::runs_here(manifest)?;
    let given = values::parameter_map(&args.params)?;
    let parameters = targets.parameters(&manifest.name, &given)?;
    let cpus = args.cpus.clone();
    let workspace = Workspace::open("program")?;
    let built = serve::build(&workspace, manifest, progress)?;
    let options = ProgramOptions {
        parameters,
        cpus: cpus.clone(),
        server_url: args.server_url.clone(),
        work_dir: None,
        time_limit: None,
        stop: Some(stop),
    };
    progress(&format!("running {}", manifest.name));
    match program::execute(&built, &options, cpus.as_ref()) {
        Ok(result) => {
            println!("{}", serde_json::to_string(&result)?);
            Ok(Exit::Success)
        }
        Err(Halt::Interrupted) => Ok(Exit::Interrupted),
        Err(Halt::Failed(why)) => Err(exit::target_failed(why)),
    }
}

fn progress(message: &str) {
    eprintln!("program: {message}");
}
