package dev.lease.samples.billing.demo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.Banner;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.StaleTokenException;
import dev.lease.samples.billing.BillingApplication;
import dev.lease.samples.billing.Invoice;
import dev.lease.samples.billing.InvoiceBilling;
import dev.lease.samples.billing.Invoices;
import dev.lease.samples.billing.Pricing;

/**
 * The holder that gets frozen, run in a JVM of its own so that it can be stopped for real ({@code kill -STOP}).
 *
 * <p>Protocol, on stdin/stdout: it takes the invoice's lease ({@code billing.frozen-holder.invoice}), reads and
 * prices the invoice and prints {@code READY token=N}. It then reads one line from stdin: on {@code WRITE} it
 * records the billing at once with token N, checking nothing first, just as a thread that a pause caught between its
 * check and its write would. It prints {@code ACCEPTED token=N} or {@code REJECTED token=N current=M counted=K} (K: its
 * {@code lease.fence.rejected} counter) and exits with
 * {@link #ACCEPTED}, {@link #REJECTED} or {@link #FAILED}.
 *
 * <p>It clears the interrupt its lost lease brings before it writes: the fence at the table, the invoice entity's
 * {@code @FenceColumn}, is the only thing that can stop this write.
 */
public final class FrozenHolder {

    /** Exit code: the table accepted the write (the fence did not protect the invoice). */
    public static final int ACCEPTED = 10;

    /** Exit code: the table refused the write with {@link StaleTokenException}. */
    public static final int REJECTED = 20;

    /** Exit code: anything else went wrong; the output says what. */
    public static final int FAILED = 1;

    private FrozenHolder() {
    }

    public static void main(String[] args) {
        int code = FAILED;
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(BillingApplication.class)
                .bannerMode(Banner.Mode.OFF).logStartupInfo(false).run(args)) {
            code = run(context, System.out);
        }
        catch (Throwable ex) {
            System.out.println("FAILED " + ex);
            ex.printStackTrace(System.out);
        }
        System.out.flush();
        System.exit(code);
    }

    private static int run(ConfigurableApplicationContext context, PrintStream out) throws Exception {
        long invoiceId = context.getEnvironment().getRequiredProperty("billing.frozen-holder.invoice", Long.class);
        String instance = context.getEnvironment().getRequiredProperty("billing.instance");
        Invoices invoices = context.getBean(Invoices.class);
        LeaseSpec spec = LeaseSpec.of(InvoiceBilling.leaseName(invoiceId), LeaseKind.CORRECTNESS)
                .withWaitFor(Duration.ofSeconds(30));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // A section of its own (LeaseTemplate.execute) binds the lease to this thread, which is where the invoice's
        // @FenceColumn takes the token from. The interrupt its loss brings is cleared before the write: this holder
        // plays one that a pause caught between its check and its write, so the fence alone must stop it.
        int[] code = {FAILED};
        try {
            context.getBean(LeaseTemplate.class).execute(spec, lease -> {
                FencingToken token = lease.token();
                Invoice invoice = invoices.find(invoiceId);
                long amount = context.getBean(Pricing.class).price(invoice);
                out.println("READY token=" + token.value() + " status=" + invoice.status());
                out.flush();
                String command = in.readLine(); // the parent freezes this process here, then tells it to write
                Thread.interrupted();
                if (!"WRITE".equals(command)) {
                    out.println("FAILED expected WRITE, got " + command);
                    return null;
                }
                try {
                    invoices.recordBilling(invoiceId, amount, instance);
                    out.println("ACCEPTED token=" + token.value());
                    code[0] = ACCEPTED;
                }
                catch (StaleTokenException ex) {
                    // What an operator sees of it: lease_fence_rejected_total{table="invoice"} went up.
                    double counted = context.getBean(MeterRegistry.class).get("lease.fence.rejected")
                            .tag("table", "invoice").counter().count();
                    out.println("REJECTED token=" + token.value() + " current=" + ex.current() + " counted="
                            + (long) counted);
                    code[0] = REJECTED;
                }
                finally {
                    out.flush();
                }
                return null;
            });
        }
        catch (LeaseLostException lost) {
            // Expected: the lease was lost while this process was frozen; the outcome is the write's.
        }
        return code[0];
    }
}
