package dev.lease.autoconfigure.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.core.LeaseDescription;
import dev.lease.core.LeaseEngineListener;
import dev.lease.testing.EmbeddedRedis;

/**
 * Issue 44: a {@code whenBusy = SKIP} job on Spring's real scheduler, its Redis stopped: every tick fails to reach
 * the store, and the log says so in one WARN per outage, not one stack trace per tick; the job runs again once Redis is
 * back.
 */
@ExtendWith(OutputCaptureExtension.class)
class ScheduledStoreOutageTest {

    private static final String SKIPPED = "The scheduled run was skipped";
    private static final String SPRINGS_ERROR = "Unexpected error occurred in scheduled task";

    @Test
    void aStoreOutageIsOneWarnPerOutageNotAStackTracePerTick(CapturedOutput output) throws Exception {
        try (EmbeddedRedis redis = EmbeddedRedis.start();
                ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class)
                        .web(WebApplicationType.NONE).logStartupInfo(false)
                        .run("--spring.main.banner-mode=off", "--lease.backend=redis",
                                "--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redis.port(),
                                "--spring.data.redis.timeout=" + seconds(2).toMillis() + "ms",
                                "--spring.data.redis.connect-timeout=" + seconds(2).toMillis() + "ms")) {
            Report report = app.getBean(Report.class);
            FailedAcquires failed = app.getBean(FailedAcquires.class);
            await().atMost(seconds(30)).until(() -> report.runs() > 0);

            for (int outage = 1; outage <= 2; outage++) {
                redis.stop();
                int before = failed.count.get();
                await().atMost(seconds(60)).until(() -> failed.count.get() >= before + 3);
                assertThat(occurrences(output, SKIPPED)).as("WARN lines after outage " + outage).isEqualTo(outage);
                assertThat(output.getAll()).doesNotContain(SPRINGS_ERROR);
                redis.restart();
                int runs = report.runs();
                await().atMost(seconds(60)).until(() -> report.runs() > runs);
                assertThat(output.getAll()).contains("granted again");
            }
        }
    }

    private static int occurrences(CapturedOutput output, String text) {
        return output.getAll().split(java.util.regex.Pattern.quote(text), -1).length - 1;
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableScheduling
    @Import(Report.class)
    static class App {

        @Bean
        FailedAcquires failedAcquires() {
            return new FailedAcquires();
        }
    }

    static class Report {

        private final AtomicInteger runs = new AtomicInteger();

        /** Through the proxy that {@code @Leased} puts around this bean, whose own fields are not the target's. */
        public int runs() {
            return runs.get();
        }

        @Scheduled(fixedDelay = 100)
        @Leased(name = "nightly-report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public void run() {
            runs.incrementAndGet();
        }
    }

    /** Counts the ticks whose acquire failed, so the test knows several ticks met the outage. */
    static class FailedAcquires implements LeaseEngineListener {

        final AtomicInteger count = new AtomicInteger();

        @Override
        public Acquisition acquiring(LeaseDescription lease) {
            return new Acquisition() {
                @Override
                public Runnable granted(java.util.OptionalLong token) {
                    return () -> { };
                }

                @Override
                public void busy() {
                }

                @Override
                public void failed(Throwable error) {
                    count.incrementAndGet();
                }
            };
        }
    }
}
