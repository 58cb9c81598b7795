package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.testing.EmbeddedRedis;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.TestTiming;

/**
 * The job {@code holdAtLeast} exists for: a short {@code @Scheduled(fixedRate)} job with
 * {@code @Leased(kind = EFFICIENCY, whenBusy = SKIP)} on three application instances (three contexts, each with its own
 * client) whose ticks are not aligned. Without a hold, each instance's tick finds the lease free, as the job released
 * it at once: one run per instance per period. Held for most of the period, the next ticks of every instance find it
 * busy: one run per period. Runs are told apart by their time on this JVM's monotonic clock, never by wall clocks.
 */
class HoldAtLeastScheduledJobTest {

    private static final Duration PERIOD = TestTiming.seconds(1);
    private static final Duration HOLD = PERIOD.multipliedBy(9).dividedBy(10);
    /**
     * Two runs under the hold are at least this far apart: a run's start is after its grant, the next grant after the
     * hold since it, less the time between the grant and the start of the job's body (allowed a tenth of the period).
     */
    private static final Duration HELD_APART = PERIOD.multipliedBy(8).dividedBy(10);

    private static final Queue<Run> RUNS = new ConcurrentLinkedQueue<>();

    private static EmbeddedRedis redis;
    private static EmbeddedZooKeeper zookeeper;

    record Run(String instance, long at) {
    }

    @BeforeAll
    static void startServers() throws Exception {
        redis = EmbeddedRedis.start();
        zookeeper = EmbeddedZooKeeper.start();
    }

    @AfterAll
    static void stopServers() throws Exception {
        redis.close();
        zookeeper.close();
    }

    @BeforeEach
    void forgetRuns() {
        RUNS.clear();
    }

    /** Also: the instances shutting down release the held-over lease while their Redis clients still run. */
    @Test
    void onRedisAHeldJobRunsOncePerPeriod() {
        onThreeInstances(redis(), HOLD, runs -> assertOnePerPeriod(runs));
        assertThat(redis.admin().hasKey("lease:hold-report")).as("the held-over lease left to its ttl").isFalse();
    }

    @Test
    void onRedisAJobNotHeldRunsOncePerInstance() {
        onThreeInstances(redis(), Duration.ZERO, runs -> assertOnePerInstance(runs));
    }

    @Test
    void onZooKeeperAHeldJobRunsOncePerPeriod() {
        onThreeInstances(zooKeeper(), HOLD, runs -> assertOnePerPeriod(runs));
    }

    @Test
    void onZooKeeperAJobNotHeldRunsOncePerInstance() {
        onThreeInstances(zooKeeper(), Duration.ZERO, runs -> assertOnePerInstance(runs));
    }

    private static ApplicationContextRunner redis() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
                        LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=redis", "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.timeout=" + EmbeddedRedis.COMMAND_TIMEOUT.toMillis() + "ms");
    }

    private static ApplicationContextRunner zooKeeper() {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=zookeeper",
                        "lease.zookeeper.connect-string=" + zookeeper.connectString());
    }

    /**
     * Starts three instances, their first ticks a third of a period apart, and checks the runs made once all three
     * are up, when at least seven of them were made or the wait for them ran out.
     */
    private static void onThreeInstances(ApplicationContextRunner backend, Duration hold, Consumer<List<Run>> check) {
        ApplicationContextRunner[] instances = new ApplicationContextRunner[3];
        for (int i = 0; i < 3; i++) {
            instances[i] = backend.withUserConfiguration(JobConfiguration.class).withPropertyValues(
                    "job.instance=" + (char) ('a' + i), "job.period=" + PERIOD.toMillis(),
                    "job.offset=" + PERIOD.multipliedBy(i).dividedBy(3).toMillis(), "job.hold=" + hold.toMillis() + "ms");
        }
        instances[0].run(a -> instances[1].run(b -> instances[2].run(c -> {
            assertThat(List.of(a, b, c)).allSatisfy(context -> assertThat(context).hasNotFailed());
            long allUp = System.nanoTime();
            await().atMost(PERIOD.multipliedBy(6).plus(TestTiming.seconds(10)))
                    .until(() -> runsSince(allUp).size() >= (hold.isZero() ? 7 : 4));
            check.accept(runsSince(allUp));
        })));
    }

    private static List<Run> runsSince(long start) {
        return RUNS.stream().filter(run -> run.at() - start >= 0).sorted(Comparator.comparingLong(Run::at)).toList();
    }

    /** No two runs closer than the hold allows, whichever instance made them. */
    private static void assertOnePerPeriod(List<Run> runs) {
        List<Long> gaps = gapsMillis(runs);
        assertThat(gaps).as("ms between runs (%s), each at least %s apart under the hold", describe(runs),
                HELD_APART).allSatisfy(gap -> assertThat(gap).isGreaterThanOrEqualTo(HELD_APART.toMillis()));
    }

    /** Every instance ran, and runs came closer together than one period allows: more than one run per period. */
    private static void assertOnePerInstance(List<Run> runs) {
        assertThat(runs).as("runs: %s", describe(runs)).extracting(Run::instance).contains("a", "b", "c");
        assertThat(gapsMillis(runs).stream().mapToLong(Long::longValue).min().orElseThrow())
                .as("ms between the closest runs (%s): without a hold, instances run in the same period",
                        describe(runs)).isLessThan(HELD_APART.toMillis());
    }

    private static List<Long> gapsMillis(List<Run> runs) {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < runs.size(); i++) {
            gaps.add(Duration.ofNanos(runs.get(i).at() - runs.get(i - 1).at()).toMillis());
        }
        return gaps;
    }

    private static String describe(List<Run> runs) {
        long first = runs.get(0).at();
        return runs.stream().map(run -> run.instance() + "@" + Duration.ofNanos(run.at() - first).toMillis() + "ms")
                .collect(Collectors.joining(", "));
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class JobConfiguration {

        @Bean
        Job job(@Value("${job.instance}") String instance) {
            return new Job(instance);
        }
    }

    /** A short job, as most scheduled jobs are: it records when it ran, and where. */
    static class Job {

        private final String instance;

        Job(String instance) {
            this.instance = instance;
        }

        @Scheduled(fixedRateString = "${job.period}", initialDelayString = "${job.offset}")
        @Leased(name = "hold-report", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP,
                holdAtLeast = "${job.hold}")
        public void report() {
            RUNS.add(new Run(instance, System.nanoTime()));
        }
    }
}
