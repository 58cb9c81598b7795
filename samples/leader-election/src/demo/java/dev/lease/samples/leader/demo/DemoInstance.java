package dev.lease.samples.leader.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;
import dev.lease.samples.leader.LeaderApplication;
import dev.lease.samples.leader.OutboxRelay;
import dev.lease.samples.leader.ReminderJob;
import dev.lease.samples.leader.Reminders;
import dev.lease.testing.TcpProxy;

/** One instance of the reminder service that {@link LeaderDemo} runs, and its link to ZooKeeper, which it can freeze. */
record DemoInstance(String name, TcpProxy link, ConfigurableApplicationContext context) {

    /** The argument that names the ZooKeeper to use. */
    static final String CONNECT_STRING = "--lease.zookeeper.connect-string=";

    Leadership leadership() {
        return context.getBean(LeaderElections.class).get(Reminders.JOB);
    }

    long token() {
        return leadership().token().orElseThrow(() -> new IllegalStateException(name + " does not lead")).value();
    }

    ReminderJob job() {
        return context.getBean(ReminderJob.class);
    }

    OutboxRelay relay() {
        return context.getBean(OutboxRelay.class);
    }

    String setting(String property) {
        return context.getEnvironment().getProperty(property);
    }

    /**
     * Starts instance {@code name} of the reminder service, reaching ZooKeeper at {@code zookeeperPort} through a link
     * of its own, with {@code args} passed on and {@code listener} told what happens in it.
     */
    static DemoInstance start(String name, int zookeeperPort, String[] args,
            ApplicationListener<ApplicationEvent> listener) {
        TcpProxy link;
        try {
            link = new TcpProxy(zookeeperPort);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not open a link to ZooKeeper for instance " + name, ex);
        }
        String[] all = Stream.concat(Arrays.stream(args), Stream.of("--reminders.instance=" + name,
                CONNECT_STRING + link.address())).toArray(String[]::new);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(LeaderApplication.class)
                .web(WebApplicationType.NONE).bannerMode(Banner.Mode.OFF).logStartupInfo(false)
                .listeners(listener).run(all);
        return new DemoInstance(name, link, context);
    }

    /** The port of the first server of a connect string ({@code 127.0.0.1:2181,...}). */
    static int port(String connectString) {
        String first = connectString.split(",")[0].trim();
        return Integer.parseInt(first.substring(first.lastIndexOf(':') + 1));
    }
}
