package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import dev.lease.memory.InMemoryLeaseBackend;

@SpringBootTest
class QuickstartApplicationTest {

    @Autowired
    ReportJob job;

    @Autowired
    InMemoryLeaseBackend backend;

    @Test
    void theDemoShowsExclusionSkippingAndLoss() {
        List<String> log = job.log();
        List<Long> holds = log.stream().filter(l -> l.contains(" holds report-2026-12-02#"))
                .map(l -> Long.parseLong(l.substring(l.lastIndexOf('#') + 1))).toList();
        assertThat(holds).hasSize(4);
        // In-memory tokens start from the wall clock (they must rise across restarts); only their order matters.
        for (int i = 1; i < holds.size(); i++) {
            assertThat(holds.get(i)).as("token of holder %d", i + 1).isGreaterThan(holds.get(i - 1));
        }
        assertThat(log.stream().filter(l -> l.endsWith("cleans up"))).hasSizeBetween(1, 3);
        assertThat(log).contains("account 1 balance after 10 concurrent deposits of 100: 1000");
        long longWork = backend.lastToken("long-work").orElseThrow();
        assertThat(log).anyMatch(l -> l.startsWith(
                "caller got LeaseLostException: Lease 'long-work' (token " + longWork + ") was lost"));
        long batches = backend.lastToken("import").orElseThrow();
        assertThat(log).contains("imported 2 batches: {2026-11=" + batches + ", 2026-12=" + batches + "}",
                "report written under nightly-report");
    }
}
