//! `boxoffice bench plot`: throughput and p99 against concurrency, one line per label and
//! scenario, from `--json` reports of closed-loop runs, drawn to SVG.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::Report;

/// One line: (workers, requests per second, p99 in ms), by workers.
type Series = BTreeMap<u64, (f64, f64)>;

/// Reads `reports` (closed-loop runs with a `label` and a `workers` parameter) and draws
/// `out`: requests per second on the left, p99 on the right, both against workers.
pub fn draw(reports: &[Report], out: &Path) -> anyhow::Result<()> {
    let mut lines: BTreeMap<String, Series> = BTreeMap::new();
    for report in reports {
        let (Some(workers), Some(op)) = (
            report
                .parameters
                .get("workers")
                .and_then(|w| w.parse().ok()),
            report.operations.first(),
        ) else {
            continue;
        };
        let label = report.parameters.get("label").cloned().unwrap_or_default();
        let name = format!("{label} {}", report.scenario_line());
        lines
            .entry(name)
            .or_default()
            .insert(workers, (op.per_second, op.latency_ms.p99));
    }
    anyhow::ensure!(
        !lines.is_empty(),
        "no closed-loop reports with a workers parameter"
    );
    let max_workers = lines
        .values()
        .flat_map(|s| s.keys())
        .copied()
        .max()
        .unwrap_or(1);
    let max_rate = lines
        .values()
        .flat_map(|s| s.values())
        .map(|v| v.0)
        .fold(1.0, f64::max);
    let max_p99 = lines
        .values()
        .flat_map(|s| s.values())
        .map(|v| v.1)
        .fold(1.0, f64::max);

    let root = SVGBackend::new(out, (1200, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(600);
    let x_range = (1u64..max_workers.max(2)).log_scale();
    let mut rate = ChartBuilder::on(&left)
        .caption("requests per second", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range.clone(), 0.0..max_rate * 1.1)?;
    rate.configure_mesh()
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .x_desc("concurrent workers")
        .y_desc("requests/s")
        .draw()?;
    let mut p99 = ChartBuilder::on(&right)
        .caption("p99 latency", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, 0.0..max_p99 * 1.1)?;
    p99.configure_mesh()
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT)
        .x_desc("concurrent workers")
        .y_desc("ms")
        .draw()?;
    for (i, (name, series)) in lines.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let points: Vec<(u64, f64)> = series.iter().map(|(w, v)| (*w, v.0)).collect();
        rate.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour.stroke_width(2)));
        rate.draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())))?;
        let points: Vec<(u64, f64)> = series.iter().map(|(w, v)| (*w, v.1)).collect();
        p99.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?;
        p99.draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())))?;
    }
    rate.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Reads the JSON reports at `paths`.
pub fn read(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<Report>> {
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)?;
            Ok(serde_json::from_str(&text)?)
        })
        .collect()
}
