package dev.lease.autoconfigure.docs;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.JdbcFence;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * Issue 44: every Prometheus series docs/operations.md names exists under that name in a real scrape of a real
 * application (Micrometer's Prometheus registry, as Boot wires it), after the application acquired, held, renewed and
 * lost a lease and had a fence refuse a stale token.
 */
class DocsMeterNamesTest {

    private static final Pattern SERIES = Pattern.compile("`(lease_[a-z_]+_(?:total|count|sum|max|seconds))\\b");

    @Test
    void everySeriesOfTheOperationsPageIsInAScrape() throws Exception {
        Set<String> documented = new LinkedHashSet<>();
        Matcher found = SERIES.matcher(Files.readString(Path.of("../docs/operations.md")));
        while (found.find()) {
            documented.add(found.group(1));
        }
        assertThat(documented).as("the series the page names").contains("lease_lost_total", "lease_renewals_total");
        ExecutorService holder = Executors.newSingleThreadExecutor();
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE).logStartupInfo(false)
                .run("--spring.main.banner-mode=off", "--lease.backend=in-memory",
                        "--spring.datasource.url=jdbc:h2:mem:docs-meters;DB_CLOSE_DELAY=-1")) {
            LeaseTemplate leases = app.getBean(LeaseTemplate.class);
            CountDownLatch granted = new CountDownLatch(1);
            Future<?> held = holder.submit(() -> leases.execute(LeaseSpec.of("docs-held", LeaseKind.CORRECTNESS)
                    .withTtl(seconds(3)).withRenewEvery(Duration.ofMillis(seconds(3).toMillis() / 6)), lease -> {
                        granted.countDown();
                        Thread.sleep(Long.MAX_VALUE); // until the lease is taken away: a loss interrupts it
                        return null;
                    }));
            assertThat(granted.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            PrometheusMeterRegistry prometheus = app.getBean(PrometheusMeterRegistry.class);
            await().atMost(seconds(10)).until(() -> prometheus.scrape().contains("lease_renewals_total{"));
            String whileHeld = prometheus.scrape();
            app.getBean(InMemoryLeaseBackend.class).revoke("docs-held");
            await().atMost(seconds(10)).until(held::isDone);
            refuseAStaleToken(app, leases);

            String scrape = whileHeld + prometheus.scrape();
            assertThat(documented).allSatisfy(series -> assertThat(scrape).as("a scrape, for " + series)
                    .containsPattern("(?m)^" + series + "[{ ]"));
        }
        finally {
            holder.shutdownNow();
        }
    }

    private static void refuseAStaleToken(ConfigurableApplicationContext app, LeaseTemplate leases) {
        JdbcFence fence = app.getBean(JdbcFence.class);
        TransactionTemplate tx = app.getBean(TransactionTemplate.class);
        FencingToken first = leases.execute(LeaseSpec.of("docs-fence", LeaseKind.CORRECTNESS), lease -> lease.token());
        FencingToken second = leases.execute(LeaseSpec.of("docs-fence", LeaseKind.CORRECTNESS), lease -> lease.token());
        tx.executeWithoutResult(status -> fence.advance("docs", second));
        try {
            tx.executeWithoutResult(status -> fence.advance("docs", first));
        }
        catch (RuntimeException expected) {
            // the refusal is what the counter counts
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }
}
