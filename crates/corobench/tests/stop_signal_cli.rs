//! A server that ignores its stop signal costs its stop timeout on every
//! trial: the trial says so (a flag of its own, with how long it waited)
//! and the report names the target, instead of the time passing unseen.

mod lab;

use corobench_model::TrialFlag;
use corobench_store::Store;
use lab::{Lab, text};

#[test]
fn a_server_that_ignores_sigterm_is_reported_with_the_time_it_cost() {
    let lab = Lab::new();
    let kit = corobench_testkit::binary_path().display().to_string();
    let spec = lab.write(
        "spec.toml",
        &format!(
            "name = \"stop\"\ntargets = [\"stubborn\"]\n\
             [run]\ntrials = 1\nduration = \"0.3s\"\nwarmup = \"0.1s\"\nidle = \"0.1s\"\n\
             [schedule]\nconnections = 2\n\
             [[workloads]]\nname = \"json\"\npath = \"/json\"\n\
             [servers.stubborn]\ncommand = [{kit:?}, \"--fault\", \"ignore-sigterm\"]\n\
             stop_timeout_s = 1\n"
        ),
    );
    let output = lab.run(&["run", spec.to_str().unwrap()]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let store = Store::open_existing(lab.db()).unwrap();
    let run = store
        .load_run(&store.resolve_run_id("latest").unwrap())
        .unwrap();
    let killed = run.trials[0].flags.iter().find_map(|flag| match flag {
        TrialFlag::KilledAtStop { signal, waited_s } => Some((signal.clone(), *waited_s)),
        _ => None,
    });
    let (signal, waited_s) = killed.expect("the trial carries the stop that needed SIGKILL");
    assert_eq!(signal, "SIGTERM");
    assert!(waited_s >= 0.9, "its stop timeout is 1 s: {waited_s}");
    assert!(
        stdout.contains("ignored SIGTERM and was killed when its stop timeout ran out"),
        "{stdout}"
    );
}
