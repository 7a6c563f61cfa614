//! `--format table`: aligned columns for a terminal, readable at 100
//! columns, with colour only when asked for (a terminal, not a pipe).

use std::io::{self, Write};

use crate::document::{Align, Block, Grid, Tone};

/// Lines of prose are wrapped at this width.
const WIDTH: usize = 100;
/// Notes are indented under their heading; tables start at the margin.
const INDENT: &str = "  ";
/// Between two right-aligned (numeric) columns one space is enough; two
/// spaces set off a text column.
const NUMBER_GAP: &str = " ";
const TEXT_GAP: &str = "  ";

/// Writes `blocks` as terminal text.
pub(crate) fn write(blocks: &[Block], color: bool, out: &mut dyn Write) -> io::Result<()> {
    let mut after_grid = false;
    for block in blocks {
        if after_grid && matches!(block, Block::Grid(_) | Block::Line(_)) {
            writeln!(out)?;
        }
        after_grid = matches!(block, Block::Grid(_));
        match block {
            Block::Title(text) => writeln!(out, "{}", paint(text, Style::Bold, color))?,
            Block::Line(text) => {
                for line in wrap(text, WIDTH, "") {
                    writeln!(out, "{line}")?;
                }
            }
            Block::Heading(text) => {
                writeln!(out)?;
                writeln!(out, "{}", paint(text, Style::Bold, color))?;
            }
            Block::Grid(grid) => write_grid(grid, color, out)?,
            Block::Records(grid) => write_records(grid, color, out)?,
            Block::Notes(notes) => write_notes(notes, color, out)?,
        }
    }
    Ok(())
}

fn write_grid(grid: &Grid, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let shown: Vec<usize> = (0..grid.header.len())
        .filter(|&c| grid.rows.iter().any(|row| !row[c].text.is_empty()))
        .collect();
    let widths: Vec<usize> = shown
        .iter()
        .map(|&c| {
            let cells = grid.rows.iter().map(|row| width(&row[c].text));
            cells.chain([width(&grid.header[c])]).max().unwrap_or(0)
        })
        .collect();
    let header: Vec<String> = shown
        .iter()
        .zip(&widths)
        .map(|(&c, &w)| pad(&grid.header[c], w, grid.align[c]))
        .collect();
    let header = join(&header, &shown, grid);
    writeln!(out, "{}", paint(header.trim_end(), Style::Dim, color))?;
    for row in &grid.rows {
        let cells: Vec<String> = shown
            .iter()
            .zip(&widths)
            .map(|(&c, &w)| {
                let text = pad(&row[c].text, w, grid.align[c]);
                paint(&text, tone_style(row[c].tone), color)
            })
            .collect();
        writeln!(out, "{}", join(&cells, &shown, grid).trim_end())?;
    }
    Ok(())
}

/// Joins padded cells with the gap each column pair needs.
fn join(cells: &[String], shown: &[usize], grid: &Grid) -> String {
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            let (before, here) = (shown[i - 1], shown[i]);
            // Numbers side by side, and footnote markers (a column without
            // a header), need one space; text columns get two.
            let tight = (grid.align[before] == Align::Right && grid.align[here] == Align::Right)
                || grid.header[here].is_empty();
            line.push_str(if tight { NUMBER_GAP } else { TEXT_GAP });
        }
        line.push_str(cell);
    }
    line
}

/// Each row as a numbered record: its first cell as the title, then one
/// line per other non-empty cell, `header  value`, wrapped under itself.
fn write_records(grid: &Grid, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let labels = grid
        .header
        .iter()
        .skip(1)
        .map(|h| width(h))
        .max()
        .unwrap_or(0);
    for (i, row) in grid.rows.iter().enumerate() {
        let Some((title, cells)) = row.split_first() else {
            continue;
        };
        // Records follow their heading's explanation after a blank line,
        // and each other after one.
        writeln!(out)?;
        let marker = format!("{}. ", i + 1);
        let hang = " ".repeat(width(&marker));
        for (k, line) in wrap(&title.text, WIDTH - hang.len(), "").iter().enumerate() {
            let lead = if k == 0 { &marker } else { &hang };
            writeln!(out, "{lead}{}", paint(line, Style::Bold, color))?;
        }
        let under = " ".repeat(hang.len() + labels + TEXT_GAP.len());
        for (header, cell) in grid.header.iter().skip(1).zip(cells) {
            if cell.text.is_empty() {
                continue;
            }
            let label = pad(header, labels, Align::Left);
            let lines = wrap(&cell.text, WIDTH - under.len(), "");
            for (k, line) in lines.iter().enumerate() {
                let text = paint(line, tone_style(cell.tone), color);
                if k == 0 {
                    let label = paint(&label, Style::Dim, color);
                    writeln!(out, "{hang}{label}{TEXT_GAP}{text}")?;
                } else {
                    writeln!(out, "{under}{text}")?;
                }
            }
        }
    }
    Ok(())
}

fn write_notes(notes: &[(usize, String)], color: bool, out: &mut dyn Write) -> io::Result<()> {
    if notes.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "{}", paint("Notes", Style::Bold, color))?;
    for (marker, text) in notes {
        let marker = crate::units::superscript(*marker);
        let hang = " ".repeat(width(&marker) + 1);
        let lines = wrap(text, WIDTH - INDENT.len() - hang.len(), "");
        for (i, line) in lines.iter().enumerate() {
            let lead = if i == 0 {
                format!("{marker} ")
            } else {
                hang.clone()
            };
            let lead = if i == 0 {
                paint(&lead, Style::Yellow, color)
            } else {
                lead
            };
            writeln!(out, "{INDENT}{lead}{line}")?;
        }
    }
    Ok(())
}

/// Display width: every character of our output is one column wide.
fn width(text: &str) -> usize {
    text.chars().count()
}

fn pad(text: &str, to: usize, align: Align) -> String {
    let fill = " ".repeat(to.saturating_sub(width(text)));
    match align {
        Align::Left => format!("{text}{fill}"),
        Align::Right => format!("{fill}{text}"),
    }
}

/// Greedy word wrap; `indent` starts every line after the first.
fn wrap(text: &str, max: usize, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && width(&line) + 1 + width(word) > max {
            lines.push(std::mem::take(&mut line));
            line.push_str(indent);
        }
        if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[derive(Clone, Copy)]
enum Style {
    Plain,
    Bold,
    Dim,
    Green,
    Red,
    Yellow,
}

fn tone_style(tone: Tone) -> Style {
    match tone {
        Tone::Plain => Style::Plain,
        Tone::Improved => Style::Green,
        Tone::Regressed => Style::Red,
        Tone::Warning => Style::Yellow,
    }
}

/// ANSI colour, only when `color`, around the text but not its padding.
fn paint(text: &str, style: Style, color: bool) -> String {
    let content = text.trim();
    if !color || content.is_empty() {
        return text.to_owned();
    }
    let start = text.len() - text.trim_start().len();
    let end = start + content.len();
    format!(
        "{}{}{}",
        &text[..start],
        paint_all(content, style),
        &text[end..]
    )
}

fn paint_all(text: &str, style: Style) -> String {
    let code = match style {
        Style::Plain => return text.to_owned(),
        Style::Bold => "1",
        Style::Dim => "2",
        Style::Green => "32",
        Style::Red => "31",
        Style::Yellow => "33",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Cell;

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("aa bb cc", 5, ""), vec!["aa bb", "cc"]);
        assert_eq!(wrap("", 5, ""), Vec::<String>::new());
    }

    #[test]
    fn grids_align_and_drop_empty_columns() {
        let mut grid = Grid::new(&[
            ("name", Align::Left),
            ("x", Align::Right),
            ("e", Align::Left),
        ]);
        grid.rows
            .push(vec![Cell::plain("a"), Cell::plain("1.5"), Cell::plain("")]);
        grid.rows
            .push(vec![Cell::plain("bbb"), Cell::plain("22"), Cell::plain("")]);
        let mut out = Vec::new();
        write_grid(&grid, false, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "name    x\na     1.5\nbbb    22\n"
        );
    }

    #[test]
    fn colour_only_when_asked() {
        assert_eq!(paint("x", Style::Red, false), "x");
        assert_eq!(paint("x", Style::Red, true), "\x1b[31mx\x1b[0m");
        assert_eq!(paint("  ", Style::Red, true), "  ");
        assert_eq!(paint(" x ", Style::Red, true), " \x1b[31mx\x1b[0m ");
    }
}
