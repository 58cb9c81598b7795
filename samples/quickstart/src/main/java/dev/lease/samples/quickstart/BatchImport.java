package dev.lease.samples.quickstart;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Service;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;

/** Programmatic use of leases, for code that cannot be a {@code @Leased} method. Referenced by the README. */
@Service
public class BatchImport {

    private final LeaseTemplate leases;
    private final Map<String, Long> written = new ConcurrentHashMap<>();

    public BatchImport(LeaseTemplate leases) {
        this.leases = leases;
    }

    /** Holds the lease across several steps and checks it before each, since nothing interrupts an acquire()d lease. */
    public int importAll(List<String> batches) {
        try (Lease lease = leases.acquire(LeaseSpec.of("import", LeaseKind.CORRECTNESS).withWaitFor(Duration.ofSeconds(5)))) {
            for (String batch : batches) {
                lease.checkValid();
                write(batch, lease.token());
            }
            return batches.size();
        }
    }

    /** The same as a {@code @Leased} method: bound to the thread, interrupted on loss, released at the end. */
    public String nightlyReport() {
        return leases.execute(LeaseSpec.of("nightly-report", LeaseKind.EFFICIENCY),
                lease -> "report written under " + lease.name());
    }

    /** Which token wrote each batch. */
    public Map<String, Long> written() {
        return written;
    }

    private void write(String batch, FencingToken token) {
        written.put(batch, token.value());
    }
}
