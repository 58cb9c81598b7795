package dev.lease.faults.scenarios.once;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

import dev.lease.faults.checker.FaultResults;
import dev.lease.faults.checker.History;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.MutantRuns;
import dev.lease.once.JdbcOnceStore;
import dev.lease.testing.PostgresServer;
import dev.lease.testing.TcpProxy;

/**
 * A scheduled job on three instances of an application ({@link OnceJob}) sharing one PostgreSQL, each through a link
 * of its own, ticking every second with {@code @Once(key = "job-#{period}")} under faults no lease can hide: leases
 * that never exclude each other (each instance has its own store), clocks set apart by up to 450 ms, and a nemesis
 * striking inside runs, after the effect and before the commit: a holder paused longer than a period (deaf to
 * interrupts), a link frozen with the transaction open, an instance killed (its connections reset, its context
 * closed, a new instance started in its place). The effects are counted per period: exactly one for every period in
 * which a run committed, never two. Against the {@linkplain Mutant#FENCE fence mutant} the job's key guards nothing
 * ({@link OnceJob.KeyedStore}), and the count must find a period that took effect twice.
 */
class ScheduledOnceFaultScenariosTest extends FaultScenarios {

    private static final Log log = LogFactory.getLog(ScheduledOnceFaultScenariosTest.class);

    private static final String SCENARIO = "scheduled-once";
    private static final String BACKEND = "in-memory leases, @Once on PostgreSQL (Spring)";
    private static final String KIND = "EFFICIENCY + @Once";
    private static final int INSTANCES = 3;
    private static final int MIN_PERIODS = 6;
    private static final Duration BOUND = seconds(30);

    private static PostgresServer postgres;

    private enum Fault { PAUSE, FREEZE, KILL }

    /** One server for both runs (its start is most of a short run's time); each run gets fresh tables. */
    @BeforeAll
    static void start() throws Exception {
        postgres = PostgresServer.start();
    }

    @BeforeParameterizedClassInvocation
    static void freshTables() {
        JdbcTemplate jdbc = new JdbcTemplate(postgres.dataSource());
        jdbc.execute("DROP TABLE IF EXISTS job_effect");
        jdbc.execute("DROP TABLE IF EXISTS " + JdbcOnceStore.TABLE);
        new JdbcOnceStore(postgres.dataSource(), new DataSourceTransactionManager(postgres.dataSource()))
                .createSchema();
        jdbc.execute("CREATE TABLE job_effect (once_key VARCHAR(255) NOT NULL, instance INT NOT NULL)");
    }

    @AfterAll
    static void stop() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void everyPeriodInWhichARunCommittedTookEffectOnce() throws Exception {
        MutantRuns.started(SCENARIO, KIND, true);
        String scenario = SCENARIO + Mutant.suffix();
        Random random = new Random(Seeds.of(scenario));
        JdbcTemplate jdbc = new JdbcTemplate(postgres.dataSource());
        OnceJob.reset();
        long begin = System.nanoTime();
        List<Instance> instances = new ArrayList<>();
        List<Fault> schedule = schedule(random, Soak.rounds(Fault.values().length));
        try {
            for (int i = 0; i < INSTANCES; i++) {
                instances.add(Instance.start(i, i == 0 ? 0 : offset(random)));
            }
            for (Fault fault : schedule) {
                int effectsBefore = effects(jdbc);
                strike(fault, instances, random);
                // Back to normal ticking before the next fault.
                Awaitility.await().atMost(BOUND).until(() -> effects(jdbc) > effectsBefore);
            }
            Awaitility.await().atMost(BOUND).until(() -> periods(jdbc) >= MIN_PERIODS);
        }
        finally {
            instances.stream().filter(instance -> instance.context().isActive())
                    .forEach(instance -> instance.job().stop());
            instances.forEach(Instance::close);
        }
        check(scenario, jdbc, schedule.size(), (System.nanoTime() - begin) / 1e9);
    }

    /** Every fault once, in a seeded order, then as many more as the rounds ask for. */
    private static List<Fault> schedule(Random random, int rounds) {
        List<Fault> schedule = new ArrayList<>(List.of(Fault.values()));
        Collections.shuffle(schedule, random);
        while (schedule.size() < rounds) {
            schedule.add(Fault.values()[random.nextInt(Fault.values().length)]);
        }
        return schedule;
    }

    /** Within half the period either way: the hosts still agree on most ticks' period, not on all. */
    private static long offset(Random random) {
        return random.nextInt(901) - 450;
    }

    /** Strikes {@code fault} inside the next run of any instance, and waits for it to be over. */
    private static void strike(Fault fault, List<Instance> instances, Random random) throws Exception {
        AtomicInteger victim = new AtomicInteger(-1);
        CountDownLatch struck = new CountDownLatch(1);
        CountDownLatch over = new CountDownLatch(1);
        long pauseMillis = 1200 + random.nextInt(1000);
        OnceJob.arm(index -> {
            victim.set(index);
            if (fault == Fault.FREEZE) {
                instances.get(index).link().freeze();
            }
            struck.countDown();
            if (fault == Fault.PAUSE) {
                OnceJob.pause(Duration.ofMillis(pauseMillis));
                over.countDown();
            }
            else if (fault == Fault.KILL) {
                // Dead from here on: it only returns to a commit on a connection the database has dropped.
                awaitQuietly(over, seconds(10));
            }
        });
        await(struck, BOUND);
        Instance instance = instances.get(victim.get());
        log.info("Fault " + fault + " inside a run of instance " + instance.index());
        switch (fault) {
            case PAUSE -> await(over, BOUND);
            case FREEZE -> {
                OnceJob.pause(Duration.ofMillis(1000 + random.nextInt(1000)));
                instance.link().unfreeze();
            }
            case KILL -> {
                instance.cutOff();
                // Released before the context closes, which would wait for it: it returns to a dead connection.
                over.countDown();
                instance.context().close();
                instances.set(instance.index(), Instance.start(instance.index(), offset(random)));
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch, Duration bound) {
        try {
            latch.await(bound.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            // Deaf, as a dead host is: the caller goes on to its commit, which fails.
            awaitQuietly(latch, bound);
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch, Duration bound) throws InterruptedException {
        if (!latch.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("no run of the job reached the fault within " + bound);
        }
    }

    private static int effects(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM job_effect", Integer.class);
    }

    private static int periods(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT COUNT(DISTINCT once_key) FROM job_effect", Integer.class);
    }

    /** The results row, then the verdict: one effect per period with a committed key, and none without. */
    private static void check(String scenario, JdbcTemplate jdbc, int faults, double seconds) {
        List<Map<String, Object>> twice = jdbc.queryForList("SELECT once_key, COUNT(*) AS n, STRING_AGG(CAST(instance "
                + "AS TEXT), ',') AS instances FROM job_effect GROUP BY once_key HAVING COUNT(*) > 1 ORDER BY once_key");
        int effects = effects(jdbc);
        int periods = periods(jdbc);
        FaultResults.record(new FaultResults.Row(scenario, BACKEND, KIND, periods, faults, effects,
                OnceJob.skipped.get(), OnceJob.bodies.get() - effects, effects - periods, "–", "–",
                new History.LossToInterrupt(List.of(), List.of(), 0, 0), seconds, "–"));
        log.info(scenario + ": " + periods + " periods took effect, " + effects + " effects, " + OnceJob.bodies.get()
                + " runs, " + OnceJob.skipped.get() + " skipped, " + faults + " faults");
        assertThat(twice).as("periods that took effect more than once (key, effects, instances)").isEmpty();
        Set<String> committed = new TreeSet<>();
        jdbc.queryForList("SELECT once_key FROM lease_once WHERE once_key LIKE ?", String.class,
                OnceJob.KEY_PREFIX + "%").forEach(key -> committed.add(key.replaceAll("#.*", "")));
        assertThat(new TreeSet<>(jdbc.queryForList("SELECT DISTINCT once_key FROM job_effect", String.class)))
                .as("periods with an effect: those whose key committed").isEqualTo(committed);
        assertThat(periods).as("periods that took effect").isGreaterThanOrEqualTo(MIN_PERIODS);
    }

    /** One instance of the application and its link to the database. */
    private record Instance(int index, TcpProxy link, ConfigurableApplicationContext context) {

        static Instance start(int index, long clockOffsetMillis) throws Exception {
            TcpProxy link = new TcpProxy(postgres.port());
            ConfigurableApplicationContext context = new SpringApplicationBuilder(OnceJob.class)
                    .web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                    .properties(Map.of("lease.backend", "in-memory", "lease.default-ttl", "2s",
                            "lease.once.initialize-schema", "never",
                            "spring.datasource.url", "jdbc:postgresql://127.0.0.1:" + link.port()
                                    + "/postgres?user=postgres",
                            "spring.main.register-shutdown-hook", "false", "job.instance", String.valueOf(index),
                            "job.clock-offset", String.valueOf(clockOffsetMillis)))
                    .run();
            log.info("Instance " + index + " started, its clock " + clockOffsetMillis + " ms off");
            return new Instance(index, link, context);
        }

        OnceJob job() {
            return context.getBean(OnceJob.class);
        }

        /** As the database sees a crashed host: every connection reset, none accepted again. */
        void cutOff() {
            link.reset();
            link.close();
        }

        void close() {
            link.unfreeze();
            context.close();
            link.close();
        }
    }
}
