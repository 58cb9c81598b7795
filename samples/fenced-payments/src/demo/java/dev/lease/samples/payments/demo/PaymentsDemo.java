package dev.lease.samples.payments.demo;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.samples.payments.billing.BillingApplication;
import dev.lease.samples.payments.billing.InvoiceBilling;
import dev.lease.samples.payments.service.PaymentsApplication;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.StoppableJvm;

/**
 * The story, with real servers and real processes: an embedded ZooKeeper, the payments service on Tomcat, billing
 * instance A in a JVM of its own and billing instance B. A takes invoice 42's lease and is frozen
 * ({@code kill -STOP}) before it pays; its ZooKeeper session expires, B takes the lease with a higher token and is
 * paid. A wakes up and calls with its old token: the payments service answers 409 and A sees
 * {@code StaleTokenException}. The invoice is paid once. {@code ./mvnw -pl samples/fenced-payments spring-boot:run}
 */
public final class PaymentsDemo {

    static final long INVOICE = 42;

    /** What happened, for the test to check. */
    record Result(String readyOfA, String answerToB, String outcomeOfA, int exitOfA, List<Map<String, Object>> payments) {
    }

    private final PrintStream out;
    private final Path logs;
    private final Duration patience;

    PaymentsDemo(PrintStream out, Path logs, Duration patience) {
        this.out = out;
        this.logs = logs;
        this.patience = patience;
    }

    public static void main(String[] args) throws Exception {
        new PaymentsDemo(System.out, Path.of("target"), Duration.ofSeconds(90)).run(args);
    }

    Result run(String... extraArgs) throws Exception {
        try (EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start();
                ConfigurableApplicationContext payments = new SpringApplicationBuilder(PaymentsApplication.class)
                        .properties("spring.config.name=payments").logStartupInfo(false).run()) {
            int port = ((WebServerApplicationContext) payments).getWebServer().getPort();
            List<String> billingArgs = new java.util.ArrayList<>(List.of(
                    "--lease.zookeeper.connect-string=" + zooKeeper.connectString(),
                    "--billing.payments-url=http://127.0.0.1:" + port));
            billingArgs.addAll(List.of(extraArgs));
            out.println("payments service on port " + port + ", ZooKeeper at " + zooKeeper.connectString());

            List<String> argsOfA = new java.util.ArrayList<>(billingArgs);
            argsOfA.addAll(List.of("--billing.instance=billing-A", "--billing.invoice=" + INVOICE));
            try (StoppableJvm a = StoppableJvm.start(FrozenBilling.class, argsOfA, logs.resolve("frozen-billing-A.log"),
                    java.util.regex.Pattern.compile("(READY|PAID|REFUSED|FAILED)\\b.*"))) {
                String ready = a.next(patience, "READY");
                out.println("A (pid " + a.pid() + ", a JVM of its own) holds lease invoice-" + INVOICE + ": " + ready);
                a.stop();
                out.println("A is frozen (kill -STOP) before it pays");

                List<String> argsOfB = new java.util.ArrayList<>(billingArgs);
                argsOfB.add("--billing.instance=billing-B");
                String answerToB;
                try (ConfigurableApplicationContext b = new SpringApplicationBuilder(BillingApplication.class)
                        .properties("spring.config.name=billing").logStartupInfo(false)
                        .run(argsOfB.toArray(String[]::new))) {
                    answerToB = b.getBean(InvoiceBilling.class).bill(INVOICE, 12_000);
                }
                out.println("B took the lease once A's session expired: " + answerToB);

                a.send("PAY"); // waits in the pipe until A runs again
                a.resume();
                String outcome = a.next(patience, "PAID or REFUSED");
                int exit = a.awaitExit(patience);
                out.println("A wakes up and calls with its old token: " + outcome);
                List<Map<String, Object>> paid = payments.getBean(JdbcTemplate.class)
                        .queryForList("SELECT invoice, amount, paid_for FROM payment ORDER BY id");
                out.println("payments: " + paid);
                out.println(paid.size() == 1 ? "Invoice " + INVOICE + " was paid once." : "INVOICE PAID " + paid.size()
                        + " TIMES");
                return new Result(ready, answerToB, outcome, exit, paid);
            }
        }
    }
}
