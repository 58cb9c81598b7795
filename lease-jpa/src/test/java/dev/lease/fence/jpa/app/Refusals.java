package dev.lease.fence.jpa.app;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.springframework.stereotype.Component;

import dev.lease.fence.FenceListener;
import dev.lease.fence.StaleTokenException;

/** Hears of every refusal, as the {@code lease.fence.rejected} counter does: the table and the resource. */
@Component
public class Refusals implements FenceListener {

    public final List<String> heard = new CopyOnWriteArrayList<>();

    @Override
    public void rejected(String table, StaleTokenException rejection) {
        heard.add(table + ":" + rejection.resource());
    }
}
