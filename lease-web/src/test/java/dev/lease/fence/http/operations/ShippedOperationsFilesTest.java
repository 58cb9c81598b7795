package dev.lease.fence.http.operations;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseLostException;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.leader.LeaderElections;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.TcpProxy;

/**
 * The shipped operations files ({@code ops/prometheus/lease-alerts.yml}, {@code ops/grafana/lease-dashboard.json})
 * and the meter table of {@code docs/operations.md} against what two real instances export: every series and label
 * they name must exist, under that name, in a real Prometheus scrape of applications that took, waited for, lost and
 * fenced leases and failed an election over. The scrapes of the failover are drawn as the picture of
 * docs/operations.md ({@code target/operations/failover.svg}).
 */
class ShippedOperationsFilesTest {

    /** Labels Prometheus adds to every series it scrapes, and the application tag docs/operations.md asks for. */
    private static final Set<String> ADDED_BY_PROMETHEUS = Set.of("job", "instance");

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static EmbeddedZooKeeper zooKeeper;
    private static TcpProxy linkOfA;
    private static ConfigurableApplicationContext a;
    private static ConfigurableApplicationContext b;
    private static final ExecutorService threads = Executors.newCachedThreadPool();
    private static final Timeline timeline = new Timeline();
    private static Scrape scrapeOfA;
    private static Scrape scrapeOfB;

    @BeforeAll
    static void runTheFailover() throws Exception {
        zooKeeper = EmbeddedZooKeeper.start();
        linkOfA = new TcpProxy(zooKeeper.port());
        a = OpsApp.start("a", linkOfA.address());
        await().atMost(seconds(20)).until(() -> a.getBean(LeaderElections.class).get(OpsApp.ELECTION).isLeader());
        b = OpsApp.start("b", zooKeeper.connectString());
        Future<?> sampling = threads.submit(() -> timeline.sample(Map.of("a", OpsApp.port(a), "b", OpsApp.port(b))));

        // A busy acquire: the EFFICIENCY job is held by one call while another skips.
        OpsApp.Jobs jobs = a.getBean(OpsApp.Jobs.class);
        Future<String> holding = threads.submit(() -> jobs.report(true));
        assertThat(jobs.entered().await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(jobs.report(false)).as("skipped: held by the other call").isNull();
        jobs.release().countDown();
        assertThat(holding.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isEqualTo("done");

        // A request with no token: 428 before the handler.
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + OpsApp.port(a) + "/payments/1"))
                .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(428);

        // A stale write refused by the fence.
        JdbcFence fence = a.getBean(JdbcFence.class);
        TransactionTemplate transactions = new TransactionTemplate(
                new DataSourceTransactionManager(a.getBean(DataSource.class)));
        transactions.executeWithoutResult(status -> fence.advance("invoice-9", new FencingToken("invoice-9", 5)));
        assertThatThrownBy(() -> transactions.executeWithoutResult(
                status -> fence.advance("invoice-9", new FencingToken("invoice-9", 4))))
                .isInstanceOf(StaleTokenException.class);

        // A holder and a leader whose link to ZooKeeper freezes: both lost, B takes the election over.
        CountDownLatch started = new CountDownLatch(1);
        Future<Long> billing = threads.submit(() -> jobs.bill(1, started));
        assertThat(started.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        timeline.mark("A's link to ZooKeeper frozen");
        linkOfA.freeze();
        assertThatThrownBy(() -> billing.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(LeaseLostException.class);
        await().atMost(seconds(30)).until(() -> b.getBean(LeaderElections.class).get(OpsApp.ELECTION).isLeader());
        timeline.mark("B leads");
        linkOfA.unfreeze();
        timeline.mark("A's link back");
        // A few more samples after the failover, for the picture.
        timeline.waitForSamples(10);
        timeline.stop();
        sampling.get(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        scrapeOfA = Scrape.of(OpsApp.port(a));
        scrapeOfB = Scrape.of(OpsApp.port(b));
        Path picture = Path.of("target/operations/failover.svg");
        Files.createDirectories(picture.getParent());
        Files.writeString(picture, timeline.svg());
    }

    @AfterAll
    static void stop() throws Exception {
        threads.shutdownNow();
        for (AutoCloseable closeable : new AutoCloseable[] {a, b, linkOfA, zooKeeper}) {
            if (closeable != null) {
                closeable.close();
            }
        }
    }

    @Test
    void theScenarioShowsInTheScrape() {
        assertThat(scrapeOfA.sum("lease_lost_total", Map.of("cause", "backend-reported"))).isPositive();
        assertThat(scrapeOfA.sum("lease_fence_rejected_total", Map.of("table", "lease_fence"))).isEqualTo(1);
        assertThat(scrapeOfA.sum("lease_fence_token_required_total", Map.of("reason", "missing"))).isEqualTo(1);
        assertThat(scrapeOfA.sum("lease_acquire_seconds_count", Map.of("outcome", "busy"))).isEqualTo(1);
        assertThat(scrapeOfB.sum("lease_leader", Map.of("election", OpsApp.ELECTION))).isEqualTo(1);
        assertThat(scrapeOfA.series()).as("acquire latency as a histogram, as management.metrics.distribution asked")
                .containsKey("lease_acquire_seconds_bucket");
    }

    @Test
    void everySeriesAndLabelOfTheAlertRulesExists() throws Exception {
        assertExported(OpsFiles.used(OpsFiles.expressions("ops/prometheus/lease-alerts.yml")), "lease-alerts.yml");
    }

    @Test
    void everySeriesAndLabelOfTheDashboardExists() throws Exception {
        assertExported(OpsFiles.used(OpsFiles.expressions("ops/grafana/lease-dashboard.json")),
                "lease-dashboard.json");
    }

    @Test
    void everySeriesAndMeterOfTheOperationsPageExists() throws Exception {
        Map<String, Set<String>> exported = exported();
        assertThat(OpsFiles.seriesNamedIn("docs/operations.md")).as("series docs/operations.md names")
                .isNotEmpty().allSatisfy(name -> assertThat(exported).containsKey(name));
        assertThat(OpsFiles.metersTabledIn("docs/operations.md")).as("meters of docs/operations.md's table")
                .hasSizeGreaterThan(5).allSatisfy(meter -> assertThat(exported.keySet())
                        .as("a series of meter " + meter)
                        .anyMatch(series -> series.startsWith(meter.replace('.', '_').replace('-', '_') + "_")
                                || series.equals(meter.replace('.', '_'))));
    }

    private static void assertExported(Map<String, Set<String>> used, String file) {
        assertThat(used).as("series " + file + " uses").isNotEmpty();
        Map<String, Set<String>> exported = exported();
        Map<String, String> missing = new TreeMap<>();
        used.forEach((series, labels) -> {
            if (!exported.containsKey(series)) {
                missing.put(series, "no such series");
                return;
            }
            Set<String> absent = new TreeSet<>(labels);
            absent.removeAll(exported.get(series));
            absent.removeAll(ADDED_BY_PROMETHEUS);
            if (!absent.isEmpty()) {
                missing.put(series, "no label " + absent);
            }
        });
        assertThat(missing).as(file + " names what the applications do not export; they export " + exported)
                .isEmpty();
    }

    private static Map<String, Set<String>> exported() {
        Map<String, Set<String>> exported = new TreeMap<>(scrapeOfA.series());
        scrapeOfB.series().forEach((name, labels) -> exported.merge(name, labels, (x, y) -> {
            Set<String> both = new TreeSet<>(x);
            both.addAll(y);
            return both;
        }));
        return exported;
    }

    /** For the picture: a few series of both instances, scraped every quarter second. */
    static final class Timeline {

        private static final Map<String, String> DRAWN = new LinkedHashMap<>();

        static {
            DRAWN.put("lease_leader", "leader");
            DRAWN.put("lease_held_seconds_count", "leases held");
            DRAWN.put("lease_lost_total", "leases lost (total)");
        }

        /** The first sample's time: the picture starts there. */
        private volatile long start = System.nanoTime();
        private final List<double[]> rows = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final List<String[]> marks = new java.util.concurrent.CopyOnWriteArrayList<>();
        private volatile boolean stopped;

        void sample(Map<String, String> ports) {
            start = System.nanoTime();
            while (!stopped) {
                try {
                    double[] row = new double[1 + 2 * DRAWN.size()];
                    row[0] = (System.nanoTime() - start) / 1e9;
                    int i = 1;
                    for (String instance : List.of("a", "b")) {
                        Scrape scrape = Scrape.of(ports.get(instance));
                        for (String series : DRAWN.keySet()) {
                            row[i++] = scrape.sum(series, Map.of());
                        }
                    }
                    rows.add(row);
                    Thread.sleep(250);
                }
                catch (InterruptedException ex) {
                    return;
                }
                catch (Exception ex) {
                    // A scrape that failed is a gap in the picture, not a failure of the test.
                }
            }
        }

        void mark(String what) {
            marks.add(new String[] {String.valueOf((System.nanoTime() - start) / 1e9), what});
        }

        void waitForSamples(int more) {
            int target = rows.size() + more;
            await().atMost(seconds(30)).until(() -> rows.size() >= target);
        }

        void stop() {
            stopped = true;
        }

        String svg() {
            return FailoverChart.draw(List.copyOf(rows), List.copyOf(DRAWN.values()), List.copyOf(marks));
        }
    }
}
