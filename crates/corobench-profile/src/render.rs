//! Folded stacks → a flame graph (SVG), drawn by inferno.

use inferno::flamegraph::{self, Options};

use crate::error::ProfileError;
use crate::fold::FoldedStacks;

/// The flame graph of `folded` as a standalone SVG document titled `title`.
/// Colours are chosen from each frame's name, so the same stacks always
/// give the same picture.
///
/// # Errors
/// [`ProfileError::Render`] when the stacks hold no sample.
pub fn flame_graph_svg(folded: &FoldedStacks, title: &str) -> Result<String, ProfileError> {
    let mut options = Options::default();
    options.title = title.to_owned();
    options.count_name = "samples".to_owned();
    options.deterministic = true;
    options.hash = true;
    let mut svg = Vec::new();
    flamegraph::from_lines(&mut options, folded.text.lines(), &mut svg)
        .map_err(ProfileError::Render)?;
    Ok(String::from_utf8_lossy(&svg).into_owned())
}
