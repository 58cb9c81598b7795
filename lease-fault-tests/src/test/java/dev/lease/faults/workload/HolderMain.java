package dev.lease.faults.workload;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import io.etcd.jetcd.Client;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;
import dev.lease.etcd.EtcdLeaseBackend;
import dev.lease.etcd.EtcdTesting;
import dev.lease.faults.harness.ChildHolder;
import dev.lease.faults.harness.KubernetesApi;
import dev.lease.faults.mutants.Mutant;
import dev.lease.jdbc.JdbcLeaseBackend;
import dev.lease.spi.LeaseBackend;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * A lease holder in a JVM of its own, so that it can be paused for real ({@code kill -STOP}) or run under a fake
 * wall clock: a real {@link LeaseEngine} over a ZooKeeper, etcd, JDBC or Kubernetes backend running one {@link LeaseWorker}, or with
 * {@code mode=leader} one {@link LeaderWorker} campaigning for the election named {@code lease}. Events go to stdout
 * as lines starting with {@value #PREFIX} (anything else on stdout is logging); stdin takes {@code stop},
 * {@code clock}, {@code go} and {@code arm}. Started by {@link ChildHolder}; arguments are {@code key=value}; with
 * {@code pause-before-write=true} the first write (of the first term, for a leader) waits for {@code go} (see
 * {@link PausedWrite}); with {@code fence-at-grant=true} every grant advances the ledger's fence before the work
 * runs; with {@code pause-inside-transaction=true} the first write waits for {@code go} inside its transaction instead,
 * right after its fence advance locked the fence row; {@code long-hold-*}, see {@link LongHolds}; for JDBC, {@code jdbc-table}, {@code jdbc-tokens}
 * ({@code PER_NAME} or {@code SHARED}) and {@code jdbc-delete-idle-after-ms} configure the backend as
 * {@code lease.jdbc.*} would.
 */
public final class HolderMain {

    public static final String PREFIX = "@@ ";

    private HolderMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> conf = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            conf.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Mutant.activate(Mutant.of(conf.getOrDefault("mutant", Mutant.NONE.id)));
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        CuratorFramework curator = null;
        Client etcd = null;
        LeaseBackend<?> backend;
        if (conf.get("backend").equals("zookeeper")) {
            Duration session = Duration.ofMillis(Long.parseLong(conf.get("session-ms")));
            curator = CuratorFrameworkFactory.builder().connectString(conf.get("connect"))
                    .sessionTimeoutMs((int) session.toMillis()).connectionTimeoutMs((int) session.toMillis())
                    .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
            curator.start();
            if (!curator.blockUntilConnected(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not connect to ZooKeeper at " + conf.get("connect"));
            }
            backend = new ZooKeeperLeaseBackend(curator, conf.get("root"), session);
        }
        else if (conf.get("backend").equals("etcd")) {
            etcd = EtcdTesting.client(conf.get("endpoints"));
            backend = new EtcdLeaseBackend(etcd, conf.get("prefix"), Duration.ofMillis(Long.parseLong(conf.get("ttl-ms"))));
        }
        else if (conf.get("backend").equals("kubernetes")) {
            backend = KubernetesApi.backend(KubernetesApi.client(conf.get("master-url"),
                    Duration.ofMillis(Long.parseLong(conf.get("request-timeout-ms")))), "child-" + conf.get("worker"));
        }
        else {
            // jdbc-tokens=SHARED and jdbc-delete-idle-after-ms: the shared token counter, with idle rows deleted.
            String deleteIdleAfter = conf.get("jdbc-delete-idle-after-ms");
            backend = new JdbcLeaseBackend(new DriverManagerDataSource(conf.get("jdbc-url")),
                    conf.getOrDefault("jdbc-table", JdbcLeaseBackend.DEFAULT_TABLE),
                    JdbcLeaseBackend.Tokens.valueOf(conf.getOrDefault("jdbc-tokens", "PER_NAME")),
                    deleteIdleAfter == null ? null : Duration.ofMillis(Long.parseLong(deleteIdleAfter)));
        }
        Ledger ledger = Ledger.attach(new DriverManagerDataSource(conf.get("ledger-url")), Ledger.Check.FENCED,
                conf.get("resource"));
        LeaseWorker.Config config = new LeaseWorker.Config(conf.get("lease"), LeaseKind.CORRECTNESS,
                Duration.ofMillis(Long.parseLong(conf.get("ttl-ms"))),
                Duration.ofMillis(Long.parseLong(conf.get("wait-ms"))),
                Duration.ofMillis(Long.parseLong(conf.get("hold-ms"))), Long.parseLong(conf.get("seed")));
        boolean fenceAtGrant = Boolean.parseBoolean(conf.get("fence-at-grant"));
        if (fenceAtGrant) {
            config = config.fencedAtGrant(conf.get("resource"));
        }
        try (LeaseEngine engine = Mutant.engine(backend, LeaseKind.CORRECTNESS, fenceAtGrant ? ledger.fence() : null)) {
            boolean inside = Boolean.parseBoolean(conf.get("pause-inside-transaction"));
            PausedWrite gate = new PausedWrite(out, inside || Boolean.parseBoolean(conf.get("pause-before-write")),
                    inside);
            ledger.whenLocked(gate::locked);
            int id = Integer.parseInt(conf.get("worker"));
            LeaseWorker.BeforeWrite beforeWrite = LongHolds.of(conf).then(gate);
            Worker worker = "leader".equals(conf.get("mode"))
                    ? new LeaderWorker(id, engine, ledger, config, printing(out), beforeWrite)
                    : new LeaseWorker(id, engine, ledger, config, printing(out), beforeWrite);
            Thread control = new Thread(() -> control(worker, gate, out), "holder-control");
            control.setDaemon(true);
            control.start();
            out.println(PREFIX + "READY");
            worker.run();
        }
        if (backend instanceof AutoCloseable closeable) {
            closeable.close();
        }
        if (curator != null) {
            curator.close();
        }
        if (etcd != null) {
            etcd.close();
        }
        out.println(PREFIX + "BYE");
        System.exit(0);
    }

    private static void control(Worker worker, PausedWrite gate, PrintStream out) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.equals("clock")) {
                    out.println(PREFIX + "CLK " + System.currentTimeMillis());
                }
                else if (line.equals("go")) {
                    gate.go();
                }
                else if (line.equals("arm")) {
                    gate.arm();
                }
                else if (line.equals("stop")) {
                    break;
                }
            }
        }
        catch (java.io.IOException ex) {
            // The parent went away: stop like on "stop".
        }
        worker.stop();
        // A worker still waiting at its first write must not keep the child alive: it writes (to the fence) and ends.
        gate.go();
    }

    /**
     * Freezes the worker's first write the way a process stopped between deciding to write and writing is frozen:
     * prints {@code WRITE_READY <token>}, then waits for {@code go} deaf to interrupts (a stopped process cannot see
     * the loss its engine declares), and writes right after without looking at the interrupt flag. Interrupts that
     * arrived meanwhile are reported as {@code INT} lines, and {@code WRITE_GO <interrupted>} says whether there were
     * any. The write is marked forced ({@code FORCED <id>}), so the history checks that the fence refused it rather
     * than fail the section for writing after its interrupt. Later writes pass straight through, unless {@code arm}
     * froze the next one again. Made {@code inside}, the first frozen write freezes inside its transaction instead,
     * right after its fence advance locked the fence row ({@link #locked}), and is not forced: it started before
     * any interrupt. Writes {@code arm} freezes later freeze before the write again.
     */
    static final class PausedWrite implements LeaseWorker.BeforeWrite {

        private final PrintStream out;
        private final Semaphore go = new Semaphore(0);
        private volatile boolean armed;
        private volatile boolean inside;
        private boolean forcing;

        PausedWrite(PrintStream out, boolean armed, boolean inside) {
            this.out = out;
            this.armed = armed;
            this.inside = inside;
        }

        @Override
        public void beforeWrite(long token) {
            if (!armed || inside) {
                return;
            }
            forcing = true;
            freeze(token);
        }

        /** Inside the write's transaction, once the fence row is locked with {@code token}. */
        void locked(long token) {
            if (!armed || !inside) {
                return;
            }
            inside = false;
            freeze(token);
        }

        private void freeze(long token) {
            armed = false;
            out.println(PREFIX + "WRITE_READY " + token);
            boolean interrupted = false;
            while (true) {
                try {
                    go.acquire();
                    break;
                }
                catch (InterruptedException ex) {
                    out.println(PREFIX + "INT " + System.nanoTime() + " " + token);
                    interrupted = true;
                }
            }
            // An interrupt racing with "go" is swallowed too: the frozen write must happen whatever the engine says.
            if (Thread.interrupted()) {
                out.println(PREFIX + "INT " + System.nanoTime() + " " + token);
                interrupted = true;
            }
            out.println(PREFIX + "WRITE_GO " + interrupted);
        }

        /** The frozen write is forced: it goes ahead after the interrupts it swallowed. */
        @Override
        public boolean forcesWrite() {
            boolean forced = forcing;
            forcing = false;
            return forced;
        }

        void go() {
            go.release();
        }

        /** Freezes the next write too, the same way: a scenario can make the same child write stale again. */
        void arm() {
            armed = true;
        }
    }

    private static EventSink printing(PrintStream out) {
        return new EventSink() {
            @Override
            public void invoke(long id, Kind kind, long at) {
                out.println(PREFIX + "INV " + id + " " + kind + " " + at);
            }

            @Override
            public void complete(long id, Kind kind, Outcome outcome, long token, long at, String detail) {
                String oneLine = detail == null ? "" : detail.replace('\n', ' ').replace('\r', ' ');
                out.println(PREFIX + "END " + id + " " + kind + " " + outcome + " " + token + " " + at + " " + oneLine);
            }

            @Override
            public void interrupted(long at) {
                out.println(PREFIX + "INT " + at);
            }

            @Override
            public void interrupted(long token, long at) {
                out.println(PREFIX + "INT " + at + " " + token);
            }

            @Override
            public void forced(long id) {
                out.println(PREFIX + "FORCED " + id);
            }

            @Override
            public void problem(String what) {
                out.println(PREFIX + "PROBLEM " + what.replace('\n', ' ').replace('\r', ' '));
            }
        };
    }
}
