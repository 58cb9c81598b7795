package dev.lease.fence.jpa;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoices;
import dev.lease.testing.EmbeddedZooKeeper;

/**
 * The paused-holder story through JPA, end to end: two instances of the application on a real ZooKeeper and one
 * database. A ({@link PausedHolderMain}, a child JVM) holds the lease with token 1 and a dirty invoice and is frozen
 * for real ({@code kill -STOP}); its session expires, B takes the lease with a higher token and bills the invoice; A
 * resumes and flushes, the fence refuses it, and the row holds B's write only.
 */
abstract class PausedHolderJpaTest {

    static final String LEASE = "invoice-1";
    /**
     * Long enough for a client on a loaded machine to connect (the connection timeout may not exceed it); the
     * successor waits it out once A is frozen.
     */
    private static final Duration SESSION = seconds(10);

    private static EmbeddedZooKeeper zooKeeper;

    @TempDir
    Path dir;

    abstract String jdbcUrl();

    @BeforeAll
    static void startZooKeeper() {
        zooKeeper = EmbeddedZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() {
        if (zooKeeper != null) {
            zooKeeper.close();
        }
    }

    static Map<String, String> zooKeeper(String connectString, String sessionMillis) {
        return Map.of("lease.backend", "zookeeper", "lease.zookeeper.connect-string", connectString,
                "lease.zookeeper.session-timeout", sessionMillis + "ms", "lease.default-ttl", sessionMillis + "ms",
                "lease.zookeeper.connection-timeout", sessionMillis + "ms");
    }

    @Test
    void aFrozenHoldersFlushIsRefusedAndTheRowHoldsTheSuccessorsWriteOnly() throws Exception {
        Map<String, String> zk = zooKeeper(zooKeeper.connectString(), String.valueOf(SESSION.toMillis()));
        try (ConfigurableApplicationContext b = FencedApp.start(jdbcUrl(), zk)) {
            JdbcTemplate jdbc = b.getBean(JdbcTemplate.class);
            jdbc.update("DELETE FROM invoice");
            jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (1, 'NEW', 10, 0)");
            Path go = dir.resolve("go");
            Child a = Child.start(dir, jdbcUrl(), zooKeeper.connectString(), SESSION, go);
            try {
                String dirty = a.awaitLine("DIRTY ", seconds(240));
                long aToken = Long.parseLong(dirty.substring("DIRTY ".length()).trim());
                a.signal("STOP");

                TransactionTemplate tx = new TransactionTemplate(b.getBean(PlatformTransactionManager.class));
                Invoices invoices = b.getBean(Invoices.class);
                FencingToken bToken = b.getBean(LeaseTemplate.class).execute(
                        LeaseSpec.of(LEASE, LeaseKind.CORRECTNESS).withWaitFor(seconds(60)), lease -> {
                            tx.executeWithoutResult(s -> invoices.findById(1L).orElseThrow().setState("B-WROTE"));
                            return lease.token();
                        });
                assertThat(bToken.value()).as("B's token").isGreaterThan(aToken);

                a.signal("CONT");
                Files.createFile(go);
                String outcome = a.awaitLine("OUTCOME ", seconds(120));
                assertThat(outcome).as("A's flush, in its log " + a.log).startsWith("OUTCOME REFUSED")
                        .contains("Invoice#1", "presented token " + aToken, "accepted token " + bToken.value());
                assertThat(jdbc.queryForObject("SELECT state FROM invoice WHERE id = 1", String.class))
                        .isEqualTo("B-WROTE");
                assertThat(jdbc.queryForObject("SELECT fence FROM invoice WHERE id = 1", Long.class))
                        .isEqualTo(bToken.value());
            }
            finally {
                a.close();
            }
        }
    }

    /** The child JVM: its output lines, a way to freeze and resume it, its log. */
    private static final class Child implements AutoCloseable {

        final Process process;
        final Path log;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        private Child(Process process, Path log) {
            this.process = process;
            this.log = log;
        }

        static Child start(Path dir, String jdbcUrl, String zooKeeper, Duration session, Path go) throws IOException {
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                    .toString(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath,
                    PausedHolderMain.class.getName(), jdbcUrl, zooKeeper, String.valueOf(session.toMillis()),
                    go.toString()));
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            Child child = new Child(process, dir.resolve("holder-a.log"));
            Thread reader = new Thread(child::read, "paused-holder-output");
            reader.setDaemon(true);
            reader.start();
            return child;
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null;) {
                    Files.writeString(log, line + System.lineSeparator(), StandardCharsets.UTF_8,
                            java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
                    lines.add(line);
                }
            }
            catch (IOException ignored) {
                // The child ended.
            }
        }

        String awaitLine(String prefix, Duration bound) throws InterruptedException, IOException {
            long deadline = System.nanoTime() + bound.toNanos();
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith(prefix)) {
                    return line;
                }
                if (line == null && !process.isAlive() && lines.isEmpty()) {
                    break;
                }
            }
            throw new AssertionError("holder A printed no '" + prefix + "' line within " + bound
                    + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")") + ":\n"
                    + (Files.exists(log) ? Files.readString(log) : "(no output)"));
        }

        void signal(String signal) throws IOException, InterruptedException {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -" + signal).isTrue();
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                signal("CONT");
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
