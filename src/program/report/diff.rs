//! A small line diff of an edit's old and new text: the lines both keep, and those taken out and
//! put in, from a longest common subsequence.

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// In both texts.
    Kept,
    /// Only in the old text.
    Removed,
    /// Only in the new text.
    Added,
}

/// Past this many cells of the table (old lines × new lines) the texts are shown as all
/// removed, then all added: an edit that big is read in its arguments, not as a diff.
const MAX_TABLE: usize = 250_000;

/// The lines of `old` and `new` as a diff, in order.
pub fn lines<'a>(old: &'a str, new: &'a str) -> Vec<(Line, &'a str)> {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    // Lines the two share at either end need no table.
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_middle, new_middle) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let mut diff: Vec<(Line, &str)> = old[..head].iter().map(|l| (Line::Kept, *l)).collect();
    if old_middle.len().saturating_mul(new_middle.len()) > MAX_TABLE {
        diff.extend(old_middle.iter().map(|l| (Line::Removed, *l)));
        diff.extend(new_middle.iter().map(|l| (Line::Added, *l)));
    } else {
        diff.extend(common_subsequence(old_middle, new_middle));
    }
    diff.extend(old[old.len() - tail..].iter().map(|l| (Line::Kept, *l)));
    diff
}

fn common_subsequence<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(Line, &'a str)> {
    let width = new.len() + 1;
    // longest[i * width + j]: the longest common subsequence of old[i..] and new[j..].
    let mut longest = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            longest[i * width + j] = if old[i] == new[j] {
                longest[(i + 1) * width + j + 1] + 1
            } else {
                longest[(i + 1) * width + j].max(longest[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut diff = Vec::with_capacity(old.len() + new.len());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            diff.push((Line::Kept, old[i]));
            i += 1;
            j += 1;
        } else if i < old.len()
            && (j == new.len() || longest[(i + 1) * width + j] >= longest[i * width + j + 1])
        {
            // Of two ways that keep as many lines, the old line goes first, as diffs write it.
            diff.push((Line::Removed, old[i]));
            i += 1;
        } else {
            diff.push((Line::Added, new[j]));
            j += 1;
        }
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_between_kept_ones_is_removed_and_added() {
        assert_eq!(
            lines("a\nb\nc", "a\nB\nc"),
            [
                (Line::Kept, "a"),
                (Line::Removed, "b"),
                (Line::Added, "B"),
                (Line::Kept, "c")
            ]
        );
    }

    #[test]
    fn an_insertion_keeps_every_old_line() {
        assert_eq!(
            lines("x\ny", "x\nnew\ny"),
            [(Line::Kept, "x"), (Line::Added, "new"), (Line::Kept, "y")]
        );
        assert_eq!(lines("", "one"), [(Line::Added, "one")]);
        assert_eq!(lines("a", "b"), [(Line::Removed, "a"), (Line::Added, "b")]);
    }

    #[test]
    fn texts_too_big_for_the_table_are_all_removed_then_all_added() {
        let old = (0..600).map(|n| format!("o{n}\n")).collect::<String>();
        let new = (0..600).map(|n| format!("n{n}\n")).collect::<String>();
        let diff = lines(&old, &new);
        assert_eq!(diff.len(), 1200);
        assert!(diff[..600].iter().all(|(kind, _)| *kind == Line::Removed));
        assert!(diff[600..].iter().all(|(kind, _)| *kind == Line::Added));
    }
}
