//! A flame graph drawn from folded stacks captured by `perf record` of the
//! test kit's contract server under a plaintext load (`corobench run
//! --profile`), kept as a fixture: the drawing is stable and complete.

use corobench_profile::{FoldedStacks, flame_graph_svg};

const CAPTURED: &str = include_str!("fixtures/testkit-plaintext.folded");

fn captured() -> FoldedStacks {
    let samples = CAPTURED
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    FoldedStacks {
        text: CAPTURED.to_owned(),
        samples,
    }
}

#[test]
fn captured_stacks_draw_the_same_flame_graph() {
    let svg = flame_graph_svg(&captured(), "kit/plaintext/c=4").unwrap();
    insta::assert_snapshot!(svg);
}

#[test]
fn every_sample_and_frame_of_the_capture_is_drawn() {
    let stacks = captured();
    let svg = flame_graph_svg(&stacks, "kit/plaintext/c=4").unwrap();
    assert!(
        svg.contains(&format!("all ({} samples, 100%)", stacks.samples)),
        "the root frame does not count every sample"
    );
    for frame in ["contract-conn", "tcp_recvmsg"] {
        assert!(svg.contains(frame), "{frame} is missing");
    }
}
