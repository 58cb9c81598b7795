package dev.lease.fence.jpa;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoices;

/**
 * Instance A of {@link PausedHolderJpaTest}, in a JVM of its own so that it can be frozen for real: takes the lease on
 * ZooKeeper, makes invoice 1 dirty in its transaction, says so ({@code DIRTY <token>}), and flushes once the parent
 * creates the go file. It carries on after its loss interrupt, as a holder does whose pause struck just before its
 * flush, and prints {@code OUTCOME REFUSED|COMMITTED|FAILED ...}.
 *
 * <p>Arguments: JDBC URL, ZooKeeper connect string, session timeout in milliseconds, go file.
 */
public final class PausedHolderMain {

    private PausedHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        Path go = Path.of(args[3]);
        ConfigurableApplicationContext context;
        try {
            context = FencedApp.start(args[0], PausedHolderJpaTest.zooKeeper(args[1], args[2]));
        }
        catch (RuntimeException failed) {
            // The clients' threads would keep the JVM alive: exit, so the parent's wait ends now.
            failed.printStackTrace(System.out);
            System.out.println("OUTCOME FAILED to start: " + failed);
            System.out.flush();
            System.exit(1);
            return;
        }
        LeaseTemplate leases = context.getBean(LeaseTemplate.class);
        TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        Invoices invoices = context.getBean(Invoices.class);
        try {
            // It is the first to ask; the wait only gives a slow machine's grant request time to be answered.
            leases.execute(LeaseSpec.of(PausedHolderJpaTest.LEASE, LeaseKind.CORRECTNESS)
                    .withWaitFor(Duration.ofMinutes(2)), lease -> {
                tx.executeWithoutResult(status -> {
                    invoices.findById(1L).orElseThrow().setState("A-WROTE");
                    System.out.println("DIRTY " + lease.token().value());
                    while (!Files.exists(go)) {
                        try {
                            Thread.sleep(10);
                        }
                        catch (InterruptedException lost) {
                            // The loss is noticed; this holder behaves as one whose pause hit after its last check.
                        }
                    }
                    Thread.interrupted();
                });
                return null;
            });
            System.out.println("OUTCOME COMMITTED");
        }
        catch (Throwable failure) {
            StaleTokenException stale = find(failure);
            System.out.println(stale != null ? "OUTCOME REFUSED " + stale.getMessage() : "OUTCOME FAILED " + failure);
            failure.printStackTrace(System.out);
        }
        System.out.flush();
        context.close();
        System.exit(0);
    }

    private static StaleTokenException find(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof StaleTokenException stale) {
                return stale;
            }
            for (Throwable suppressed : t.getSuppressed()) {
                StaleTokenException found = find(suppressed);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }
}
