package dev.lease.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

@SpringBootTest
class QuickstartApplicationTest {

    @Autowired
    ReportJob job;

    @Test
    void theDemoShowsExclusionSkippingAndLoss() {
        List<String> log = job.log();
        List<String> holds = log.stream().filter(l -> l.contains(" holds report-2026-12-02#")).toList();
        assertThat(holds).hasSize(4);
        for (int i = 0; i < holds.size(); i++) {
            assertThat(holds.get(i)).endsWith("#" + (i + 1));
        }
        assertThat(log.stream().filter(l -> l.endsWith("cleans up"))).hasSizeBetween(1, 3);
        assertThat(log).anyMatch(l -> l.startsWith("caller got LeaseLostException: Lease 'long-work' (token 1) was lost"));
        assertThat(log).contains("imported 2 batches: {2026-11=1, 2026-12=1}", "report written under nightly-report");
    }
}
