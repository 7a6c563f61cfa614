//! A resumed run keeps the hosts of every session.

use corobench_model::HostProvenance;

use super::fixtures::{RUN_ID, store_with_run};

fn pod(name: &str, node: &str) -> HostProvenance {
    HostProvenance {
        role: "server".into(),
        address: format!("pod/{name}"),
        node: Some(node.into()),
        ..HostProvenance::default()
    }
}

#[test]
fn hosts_of_a_resumed_session_are_added_once() {
    let (_dir, mut store) = store_with_run();
    let first = pod("corobench-server", "node-a");
    let second = pod("corobench-server", "node-b");
    store
        .add_run_hosts(RUN_ID, std::slice::from_ref(&first))
        .unwrap();
    let reread = HostProvenance {
        clock_offset_us: Some(120),
        ..first.clone()
    };
    store
        .add_run_hosts(RUN_ID, &[reread, second.clone()])
        .unwrap();
    let run = store.load_run(RUN_ID).unwrap().run;
    assert_eq!(run.provenance.hosts, [first, second]);
    assert!(store.add_run_hosts("no-such-run", &[]).is_err());
}
