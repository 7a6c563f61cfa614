//! `--format md`: the terminal report's tables as GitHub-flavoured Markdown.

use std::io::{self, Write};

use crate::document::{Align, Block, Grid};

/// Writes `blocks` as Markdown.
pub(crate) fn write(blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    write_nested(blocks, 0, out)
}

/// Writes `blocks` as Markdown with every heading `depth` levels deeper,
/// for a document inside another (a run's report on a suite's page).
pub(crate) fn write_nested(blocks: &[Block], depth: usize, out: &mut dyn Write) -> io::Result<()> {
    let title = "#".repeat(1 + depth);
    let heading = "#".repeat(2 + depth);
    for block in blocks {
        match block {
            Block::Title(text) => writeln!(out, "{title} {}\n", escape(text))?,
            Block::Line(text) => writeln!(out, "{}\n", escape(text))?,
            Block::Heading(text) => writeln!(out, "{heading} {}\n", escape(text))?,
            Block::Grid(grid) | Block::Records(grid) => write_grid(grid, out)?,
            Block::Notes(notes) if notes.is_empty() => {}
            Block::Notes(notes) => {
                writeln!(out, "{heading} Notes\n")?;
                for (marker, text) in notes {
                    writeln!(out, "{marker}. {}", escape(text))?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

fn write_grid(grid: &Grid, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<String> = grid.header.iter().map(|h| cell(h)).collect();
    let rows: Vec<Vec<String>> = grid
        .rows
        .iter()
        .map(|row| row.iter().map(|c| cell(&c.text)).collect())
        .collect();
    write_table(&header, &grid.align, &rows, out)
}

/// A table whose cells are Markdown already (escaped, or links).
pub(crate) fn write_table(
    header: &[String],
    align: &[Align],
    rows: &[Vec<String>],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "| {} |", header.join(" | "))?;
    let rule: Vec<&str> = align
        .iter()
        .map(|a| match a {
            Align::Left => ":---",
            Align::Right => "---:",
        })
        .collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in rows {
        writeln!(out, "| {} |", row.join(" | "))?;
    }
    writeln!(out)
}

/// A link whose text is escaped.
pub(crate) fn link(text: &str, target: &str) -> String {
    format!("[{}]({target})", cell(text))
}

/// A table cell: pipes escaped, and `~` kept from turning into strikethrough.
pub(crate) fn cell(text: &str) -> String {
    escape(text).replace('|', "\\|")
}

/// Characters that Markdown would read as formatting.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '_' | '`' | '~' | '<' | '>' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Cell;

    #[test]
    fn tables_escape_pipes_and_formatting() {
        let mut grid = Grid::new(&[("key", Align::Left), ("delta", Align::Right)]);
        grid.rows
            .push(vec![Cell::plain("a|b_c"), Cell::plain("~ (p=0.5 n=6)")]);
        let mut out = Vec::new();
        write_grid(&grid, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "| key | delta |\n|:---|---:|\n| a\\|b\\_c | \\~ (p=0.5 n=6) |\n\n"
        );
    }
}
