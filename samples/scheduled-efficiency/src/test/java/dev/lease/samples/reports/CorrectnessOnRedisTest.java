package dev.lease.samples.reports;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;

/** Redis issues no fencing token: a CORRECTNESS lease routed to it stops the application from starting. */
class CorrectnessOnRedisTest {

    @Test
    void theApplicationRefusesToStartWithACorrectnessLeaseOnRedis() {
        SpringApplicationBuilder app = new SpringApplicationBuilder(ReportsApplication.class)
                .bannerMode(Banner.Mode.OFF).logStartupInfo(false).profiles("correctness-on-redis");

        assertThatThrownBy(() -> app.run("--reports.cron=-").close())
                .hasMessageContaining("@Leased on MisroutedLedgerJob.closeTheBooks() (lease 'ledger-close')")
                .hasMessageContaining("CORRECTNESS leases routed to redis cannot work")
                .hasMessageContaining("lease.correctness-backend");
    }
}
