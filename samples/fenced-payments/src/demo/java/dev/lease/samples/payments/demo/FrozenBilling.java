package dev.lease.samples.payments.demo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.StaleTokenException;
import dev.lease.samples.payments.billing.BillingApplication;
import dev.lease.samples.payments.billing.PaymentsClient;

/**
 * The billing instance that gets frozen, in a JVM of its own so that {@code kill -STOP} stops it for real.
 *
 * <p>Protocol on stdin/stdout: it takes the invoice's lease and prints {@code READY token=N}, then reads one line.
 * The parent freezes it there, lets a successor take the lease and be paid, and sends {@code PAY} as it resumes it.
 * Like a thread that a pause caught between deciding to pay and paying, it then swallows the interrupt its lost
 * lease brings and calls the payments service anyway. It prints {@code PAID ...} or
 * {@code REFUSED presented=N current=M} and exits with {@link #PAID}, {@link #REFUSED} or {@link #FAILED}.
 */
public final class FrozenBilling {

    /** Exit code: the payments service paid (the fence did not protect the invoice). */
    public static final int PAID = 10;

    /** Exit code: the payments service refused the stale call; the caller saw {@link StaleTokenException}. */
    public static final int REFUSED = 20;

    /** Exit code: anything else; the output says what. */
    public static final int FAILED = 1;

    private FrozenBilling() {
    }

    public static void main(String[] args) {
        int code = FAILED;
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BillingApplication.class)
                .properties("spring.config.name=billing").bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .run(args)) {
            code = run(context);
        }
        catch (Throwable ex) {
            System.out.println("FAILED " + ex);
            ex.printStackTrace(System.out);
        }
        System.out.flush();
        System.exit(code);
    }

    private static int run(ConfigurableApplicationContext context) {
        long invoice = context.getEnvironment().getRequiredProperty("billing.invoice", Long.class);
        PaymentsClient payments = context.getBean(PaymentsClient.class);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        AtomicInteger code = new AtomicInteger(FAILED);
        LeaseSpec spec = LeaseSpec.of("invoice-" + invoice, LeaseKind.CORRECTNESS).withWaitFor(Duration.ofSeconds(30));
        try {
            context.getBean(LeaseTemplate.class).execute(spec, lease -> {
                System.out.println("READY token=" + lease.token().value());
                System.out.flush();
                String command = in.readLine(); // frozen here by the parent
                if (!"PAY".equals(command)) {
                    System.out.println("FAILED expected PAY, got " + command);
                    return null;
                }
                swallowTheInterrupt();
                try {
                    System.out.println("PAID " + payments.pay(invoice, 12_000));
                    code.set(PAID);
                }
                catch (StaleTokenException stale) {
                    System.out.println("REFUSED presented=" + stale.presented().value() + " current=" + stale.current()
                            + " resource=" + stale.resource());
                    code.set(REFUSED);
                }
                return null;
            });
        }
        catch (LeaseLostException expected) {
            // The lease was lost while frozen: what the section's caller learns once it returns.
        }
        return code.get();
    }

    /**
     * The engine interrupts a section the moment its lease is lost; a frozen JVM only gets there once it runs again.
     * This holder ignores it (the bug the fence exists for) and waits for it first, so that the call it then makes
     * is not cut short by it.
     */
    private static void swallowTheInterrupt() {
        try {
            Thread.sleep(30_000);
        }
        catch (InterruptedException ignored) {
            // Carries on regardless.
        }
    }
}
