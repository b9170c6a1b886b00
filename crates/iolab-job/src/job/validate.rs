//! The rules between a job's options (sizes, depths, engine options, logs),
//! checked once every option is applied. Each option's own range is checked
//! as it is read (`options::Range`).

use super::error::JobError;
use super::spec::JobSpec;
use super::units::plain_text;
use crate::engine::ENGINES;

impl JobSpec {
    /// Checks the rules between options; the error names the job.
    pub(super) fn validate(&self) -> Result<(), JobError> {
        let bad = |why: String| Err(JobError::invalid(&self.name, why));
        if self.name.trim().is_empty() {
            return bad("a job needs a name".into());
        }
        plain_text("job name", &self.name).or_else(|e| bad(e.to_string()))?;
        if self.bs_min > self.bs_max {
            return bad(format!(
                "blocksize_range minimum {} is larger than its maximum {}",
                self.bs_min, self.bs_max
            ));
        }
        if let Some(size) = self.size {
            if self.bs_min > size {
                return bad(format!("bs ({}) is larger than size ({size})", self.bs_min));
            }
            if self.offset.checked_add(size).is_none() {
                return bad(format!(
                    "offset ({}) + size ({size}) is past the largest file (2^64-1 bytes)",
                    self.offset
                ));
            }
        }
        let def = self.engine_def().ok_or_else(|| {
            JobError::invalid(&self.name, crate::engine::registry::unknown(&self.engine))
        })?;
        for (name, on) in self.flags.all() {
            if on && !def.options.contains(&name) {
                let takes: Vec<&str> = ENGINES
                    .iter()
                    .filter(|e| e.item.options.contains(&name))
                    .map(|e| e.name)
                    .collect();
                return bad(format!(
                    "option '{name}' applies to ioengine={} only (this job uses ioengine={})",
                    takes.join(", "),
                    self.engine
                ));
            }
        }
        (def.check)(&self.engine_config()).map_err(|e| {
            JobError::invalid(&self.name, format!("option '{}': {}", e.what, e.problem))
        })?;
        if self.logs.hist.is_some() && self.logs.hist_msec == 0 {
            return bad("write_hist_log needs log_hist_msec (e.g. log_hist_msec=1000)".into());
        }
        if self.direct
            && (!self.bs_min.is_multiple_of(512)
                || !self.bs_max.is_multiple_of(512)
                || !self.offset.is_multiple_of(512))
        {
            return bad(format!(
                "direct=1 needs bs and offset in multiples of 512 bytes (bs {}-{}, offset {})",
                self.bs_min, self.bs_max, self.offset
            ));
        }
        for group in super::groups::GROUPS {
            (group.validate)(self).map_err(|p| JobError::of_job(&self.name, p))?;
        }
        Ok(())
    }
}
