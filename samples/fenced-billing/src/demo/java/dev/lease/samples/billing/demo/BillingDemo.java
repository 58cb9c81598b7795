package dev.lease.samples.billing.demo;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;

import dev.lease.testing.TcpProxy;
import dev.lease.LeaseLostException;
import dev.lease.samples.billing.BillingApplication;
import dev.lease.samples.billing.BillingEvent.Kind;
import dev.lease.samples.billing.Invoice;
import dev.lease.samples.billing.InvoiceBilling;
import dev.lease.samples.billing.Invoices;

/**
 * Re-enacts the paused-holder story with the billing service and shows both layers of protection:
 * <ol>
 * <li><b>Interrupt.</b> Instance A bills invoice 1 when its network to ZooKeeper freezes. Its client gives up on
 * the session before the server expires it, so A's work is interrupted and its caller gets
 * {@link LeaseLostException} before B can take over; A writes nothing. B then bills the invoice.</li>
 * <li><b>Fence.</b> Instance C, in a JVM of its own, holds invoice 2's lease and is about to write when the OS
 * freezes it ({@code kill -STOP}): no interrupt can reach a stopped process. Its session expires, B takes over with
 * a higher token and bills the invoice. C wakes up ({@code kill -CONT}) and writes with its old token: the table
 * refuses it.</li>
 * </ol>
 * It prints the timeline, writes it as {@code target/billing-timeline.html}, checks the table (every invoice billed
 * exactly once) and exits 0 when everything went as told. Arguments are passed on to every instance.
 */
public final class BillingDemo {

    private final PrintStream out;
    private final Path outputDirectory;
    private final Duration patience;

    /**
     * @param patience the longest any single step may take before the demo gives up; steps end as soon as what they
     *        wait for happens
     */
    BillingDemo(PrintStream out, Path outputDirectory, Duration patience) {
        this.out = out;
        this.outputDirectory = outputDirectory;
        this.patience = patience;
    }

    public static void main(String[] args) throws Exception {
        long factor = Math.max(1, Long.getLong("lease-test.time-factor", 1));
        Result result = new BillingDemo(System.out, Path.of("target"), Duration.ofSeconds(60 * factor)).run(args);
        System.exit(result.problems().isEmpty() ? 0 : 1);
    }

    /** What the demo saw. */
    record Result(List<Timeline.Entry> timeline, long interruptedInvoice, long frozenInvoice,
            Integer frozenHolderExit, List<Invoice> invoices, List<Invoices.Charge> charges, List<Long> billedTwice,
            List<String> problems, Path picture) {
    }

    Result run(String... args) throws Exception {
        Timeline timeline = new Timeline(out);
        List<String> problems = new ArrayList<>();
        List<String> summary = new ArrayList<>();
        ExecutorService callers = Executors.newCachedThreadPool();
        long first;
        long second = -1;
        Integer frozenExit = null;
        Result result;
        out.println("Starting instances A and B of the billing service...");
        try (ConfigurableApplicationContext b = instance("B", timeline, args);
                TcpProxy network = new TcpProxy(port(zookeeper(b.getEnvironment())));
                ConfigurableApplicationContext a = instance("A", timeline, args,
                        "--lease.zookeeper.connect-string=" + network.address(), "--billing.pricing-delay=10m")) {
            Invoices invoices = b.getBean(Invoices.class);
            InvoiceBilling billingA = a.getBean(InvoiceBilling.class);
            InvoiceBilling billingB = b.getBean(InvoiceBilling.class);

            first = invoices.open("ACME", 12_000);
            timeline.restartClock();
            out.println();
            out.println("Scene 1: A's network to ZooKeeper freezes while A bills invoice " + first
                    + " (session timeout " + b.getEnvironment().getProperty("lease.zookeeper.session-timeout") + ")");
            Future<Boolean> aCall = callers.submit(() -> billingA.bill(first));
            timeline.await(e -> e.instance().equals("A") && e.kind() == Kind.WORKS, patience, "A to start pricing");
            Duration frozenAt = timeline.now();
            network.freeze();
            timeline.record("A", Kind.FAULT, first, 0, "network to ZooKeeper frozen: A's heartbeats stop getting through");
            timeline.record("B", Kind.WAITS, first, 0, "asks for lease invoice-" + first + ", held by A: waits");
            Future<Boolean> bCall = callers.submit(() -> billingB.bill(first));
            try {
                aCall.get(patience.toMillis(), TimeUnit.MILLISECONDS);
                problems.add("A finished billing invoice " + first + " although its network was frozen");
            }
            catch (ExecutionException ex) {
                if (ex.getCause() instanceof LeaseLostException lost) {
                    timeline.record("A", Kind.LOST, first, lost.token().map(t -> t.value()).orElse(0L),
                            "interrupted while pricing: its client gave up on the session; the caller got "
                                    + "LeaseLostException. A wrote nothing.");
                }
                else {
                    problems.add("A failed with " + ex.getCause() + " instead of LeaseLostException");
                }
            }
            expectBilled(bCall, "B", first, problems);
            network.unfreeze();
            timeline.outage("A", "network frozen", frozenAt);
            timeline.record("A", Kind.NOTE, first, 0, "network heals: A's client learns its session expired and "
                    + "opens a new one");

            out.println();
            if (!FrozenHolderProcess.supported()) {
                out.println("Scene 2 needs kill -STOP and kill -CONT (Linux, macOS): skipped on "
                        + System.getProperty("os.name"));
            }
            else {
                second = invoices.open("Globex", 34_500);
                out.println("Scene 2: instance C, in a JVM of its own, is frozen for real (kill -STOP) right "
                        + "before it writes invoice " + second);
                frozenExit = frozenHolderScene(b, billingB, second, timeline, callers, problems, args);
            }

            List<Invoice> billed = new ArrayList<>();
            List<Invoices.Charge> charges = new ArrayList<>();
            for (long id : second < 0 ? new long[] {first} : new long[] {first, second}) {
                billed.add(invoices.find(id));
                charges.addAll(invoices.charges(id));
            }
            OperationsView.print(out, problems, a, b);
            List<Long> twice = invoices.billedTwice();
            out.println();
            out.println("Final state of the tables:");
            out.println("  invoice  status  billed by  fence  charges (instance/token)");
            for (Invoice invoice : billed) {
                List<String> its = charges.stream().filter(c -> c.invoiceId() == invoice.id())
                        .map(c -> c.instance() + "/" + c.token()).toList();
                out.printf(Locale.ROOT, "  %7d  %-6s  %-9s  %5s  %s%n", invoice.id(), invoice.status(),
                        invoice.billedBy(), invoice.fence(), its);
                if (!invoice.isBilled() || its.size() != 1) {
                    problems.add("invoice " + invoice.id() + " should be billed exactly once, has charges " + its);
                }
                summary.add("Invoice " + invoice.id() + ": " + invoice.status() + " by " + invoice.billedBy()
                        + " with token " + invoice.fence() + "; charges " + its);
            }
            if (twice.isEmpty()) {
                summary.add("No invoice was billed twice.");
            }
            else {
                problems.add("Invoices billed twice: " + twice);
            }
            Path picture = TimelinePicture.write(timeline, "Fenced billing: a lost session and a frozen holder",
                    Stream.concat(summary.stream(), problems.stream().map(p -> "PROBLEM: " + p)).toList(),
                    outputDirectory.resolve("billing-timeline.html"));
            result = new Result(timeline.entries(), first, second, frozenExit, billed, charges, twice,
                    List.copyOf(problems), picture);
        }
        finally {
            callers.shutdownNow();
        }
        out.println();
        if (result.problems().isEmpty()) {
            out.println("No invoice was billed twice. The lost session was stopped by the interrupt, the frozen "
                    + "holder by the fence.");
        }
        else {
            result.problems().forEach(p -> out.println("PROBLEM: " + p));
        }
        out.println("Timeline picture: " + result.picture().toAbsolutePath());
        return result;
    }

    private Integer frozenHolderScene(ConfigurableApplicationContext b, InvoiceBilling billingB, long invoiceId,
            Timeline timeline, ExecutorService callers, List<String> problems, String[] args) throws Exception {
        Environment env = b.getEnvironment();
        List<String> childArgs = new ArrayList<>(Arrays.asList(args));
        childArgs.addAll(List.of("--billing.instance=C", "--billing.embedded-servers=false",
                "--billing.frozen-holder.invoice=" + invoiceId,
                "--lease.zookeeper.connect-string=" + zookeeper(env),
                "--spring.datasource.url=" + env.getRequiredProperty("spring.datasource.url"),
                "--spring.profiles.active=" + String.join(",", env.getActiveProfiles())));
        try (FrozenHolderProcess c = FrozenHolderProcess.start(childArgs, outputDirectory.resolve("frozen-holder.log"))) {
            String ready = c.next(patience, "READY");
            if (!ready.startsWith("READY")) {
                problems.add("The frozen holder did not get ready: " + ready + " (see target/frozen-holder.log)");
                return null;
            }
            long token = FrozenHolderProcess.parse(ready, "token");
            timeline.record("C", Kind.HOLDS, invoiceId, token, "holds lease invoice-" + invoiceId + " with token "
                    + token + "; read the invoice (OPEN), priced it, about to write");
            Duration stoppedAt = timeline.now();
            c.stop();
            timeline.record("C", Kind.FAULT, invoiceId, token, "frozen for real (kill -STOP " + c.pid()
                    + "), as a long GC pause or a stalled VM would; no interrupt can reach it");
            timeline.record("B", Kind.WAITS, invoiceId, 0, "asks for lease invoice-" + invoiceId
                    + ", held by C: waits for C's session to expire");
            expectBilled(callers.submit(() -> billingB.bill(invoiceId)), "B", invoiceId, problems);
            c.resumeAndWrite();
            timeline.outage("C", "process stopped", stoppedAt);
            timeline.record("C", Kind.NOTE, invoiceId, token, "resumed (kill -CONT); still believes it holds token "
                    + token + " and writes at once");
            String outcome = c.next(patience, "the outcome of its write");
            if (outcome.startsWith("REJECTED")) {
                timeline.record("C", Kind.REJECTED, invoiceId, token, "write with token " + token
                        + " refused by the table, which already accepted token " + FrozenHolderProcess.parse(outcome,
                                "current") + " (StaleTokenException); its transaction rolled back, and C's "
                                + "lease_fence_rejected_total{table=\"invoice\"} is "
                                + FrozenHolderProcess.parse(outcome, "counted"));
                if (FrozenHolderProcess.parse(outcome, "counted") != 1) {
                    problems.add("The frozen holder's refused write was not counted once: " + outcome);
                }
            }
            else if (outcome.startsWith("ACCEPTED")) {
                timeline.record("C", Kind.ACCEPTED, invoiceId, token, "write with token " + token + " ACCEPTED");
            }
            int exit = c.awaitExit(patience);
            if (!outcome.startsWith("REJECTED") || exit != FrozenHolder.REJECTED) {
                problems.add("The frozen holder's stale write was not refused: " + outcome + ", exit code " + exit);
            }
            return exit;
        }
    }

    private void expectBilled(Future<Boolean> call, String instance, long invoiceId, List<String> problems)
            throws InterruptedException {
        try {
            if (!call.get(patience.toMillis(), TimeUnit.MILLISECONDS)) {
                problems.add(instance + " found invoice " + invoiceId + " billed already");
            }
        }
        catch (ExecutionException | TimeoutException ex) {
            problems.add(instance + " could not bill invoice " + invoiceId + ": "
                    + (ex instanceof ExecutionException ? ex.getCause() : ex));
        }
    }

    private static ConfigurableApplicationContext instance(String name, Timeline timeline, String[] args,
            String... overrides) {
        String[] all = Stream.concat(Stream.concat(Arrays.stream(args), Stream.of("--billing.instance=" + name)),
                Arrays.stream(overrides)).toArray(String[]::new);
        return new SpringApplicationBuilder(BillingApplication.class).bannerMode(Banner.Mode.OFF)
                .logStartupInfo(false).listeners(timeline.listener()).run(all);
    }

    private static String zookeeper(Environment env) {
        return env.getRequiredProperty("lease.zookeeper.connect-string");
    }

    /** The port of the first server of a connect string ({@code 127.0.0.1:2181,...}). */
    private static int port(String connectString) {
        String first = connectString.split(",")[0].trim();
        return Integer.parseInt(first.substring(first.lastIndexOf(':') + 1));
    }
}
