// parley-bench: the realtime benchmark (scripts/bench-realtime runs it). Our own WebSocket client code on
// Parley's epoll event loops (one per core), against a running `parley serve`:
//
//   parley-bench direct --port P [--pairs 100] [--window 16] [--rate 0] ...    1:1 throughput and latency
//   parley-bench fanout --port P [--members 500] [--senders 5] [--window 8] ... one group, every member online
//   parley-bench idle   --port P [--count 10000] [--hold 20] ...               idle connections with heartbeats
//   parley-bench room   --port P [--members 10000] [--senders 1] [--rate 10] ... one chat room, everyone inside
//   parley-bench presence --port P --server-pid PID [--count 10000] ...       presence changes and their cost
//   parley-bench cluster --port P --ws-ports P1,P2,... [--pairs 100] [--groups 10] ... 1:1 and groups across instances
//
// Environment: BENCH_APP_KEY and BENCH_APP_SECRET (an app created with `--session-policy unlimited`).
// Results are `key=value` lines on stdout; exit status 1 when a check fails (errors over 0.1%, deliveries
// missing, connections lost) or the run cannot go on (bad option, server unreachable), 2 without a known mode.
import Glibc
import ParleyNet

Socket.ignoreSIGPIPE()

let usage = """
    usage: parley-bench direct|fanout|idle|room|presence|cluster --port PORT [options]
      every mode:  --host 127.0.0.1  --loops CORES  --login-workers 8  --connect-concurrency N  --run-id ID
      direct:      --pairs 100  --window 16  --rate 0 (messages/s over all senders; 0 = unpaced)
                   --warmup 3  --duration 10  --drain 10
      fanout:      --members 500  --senders 5  --window 8  --rate 0  --warmup 3  --duration 10  --drain 10
      room:        --members 10000  --senders 1  --window 8  --rate 0  --warmup 3  --duration 10  --drain 10
      idle:        --count 10000  --hold 20  --min-pings 1  --timeout 600  --barrier-dir DIR  --name NAME
      presence:    --server-pid PID  --count 10000  --subscriptions 200  --period 60  --baseline 30
                   --duration 60  --timeout 900  --barrier-dir DIR
      cluster:     --ws-ports PORT,PORT,... (WebSocket i to the (i % n)th; default --port)  --pairs 100  --groups 10
                   --group-size 20  --group-senders 2  --rate 300 (over all senders)  --window 8  --warmup 3
                   --duration 10  --drain 10  --idle 0 (seconds connected without load first)
                   --barrier-dir DIR (announces cluster.idle and cluster.window as they start)
      environment: BENCH_APP_KEY, BENCH_APP_SECRET
    """

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    Console.log(usage)
    exit(2)
}
do {
    let rest = arguments.dropFirst(2)
    let passed: Bool
    switch arguments[1] {
    case "direct": passed = try DirectMode.run(rest)
    case "fanout": passed = try FanoutMode.run(rest)
    case "idle": passed = try IdleMode.run(rest)
    case "room": passed = try RoomMode.run(rest)
    case "presence": passed = try PresenceMode.run(rest)
    case "cluster": passed = try ClusterMode.run(rest)
    case "-h", "--help", "help":
        Console.log(usage)
        exit(0)
    default:
        Console.log("unknown mode \(arguments[1])\n" + usage)
        exit(2)
    }
    exit(passed ? 0 : 1)
} catch {
    Console.result("status", "fail")
    Console.result("failure", error.message)
    Console.log("error: \(error.message)")
    exit(1)
}
