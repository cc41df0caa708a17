//===- ProcessGroupTest.cpp - collectives across processes over Gloo ------===//
//
// Ranks on threads of one process stand for the trainer processes: they
// meet in a scratch directory, sum and wait; a rank that leaves makes the
// others' next collective fail, naming it, within the timeout.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/ProcessGroup.h"

#include "cleave/Tensor/Tensor.h"

#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <chrono>
#include <thread>

using namespace cleave;
using namespace cleave::runtime;

namespace {

std::string scratchDirectory() {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("process-group", dir));
  return std::string(dir);
}

ProcessGroupOptions optionsFor(int rank, const std::string &dir,
                               double timeout = 20, int size = 3) {
  ProcessGroupOptions options;
  options.rank = rank;
  options.taskNames = {"chief:0"};
  for (int worker = 0; worker + 1 < size; ++worker)
    options.taskNames.push_back("worker:" + std::to_string(worker));
  options.storeDirectory = dir;
  options.timeoutSeconds = timeout;
  return options;
}

/// 2 and 4 ranks sum by Gloo's BCube, 3 by its ring.
class ProcessGroupSizes : public testing::TestWithParam<int> {};

TEST_P(ProcessGroupSizes, SumsAcrossRanksInOrderOfCalls) {
  int size = GetParam();
  std::string dir = scratchDirectory();
  std::vector<std::vector<float>> values(size);
  std::vector<std::vector<int64_t>> counts(size);
  std::vector<std::string> errors(size);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < size; ++rank)
    ranks.emplace_back([&, rank] {
      auto group = ProcessGroup::connect(optionsFor(rank, dir, 20, size));
      if (!group) {
        errors[rank] = llvm::toString(group.takeError());
        return;
      }
      EXPECT_EQ((*group)->getRank(), rank);
      EXPECT_EQ((*group)->getSize(), size);
      // More elements than one ring segment, and a second dtype.
      values[rank].assign(300000, float(rank + 1));
      values[rank][7] = float(10 * rank);
      counts[rank] = {rank, 1};
      if (llvm::Error failure = (*group)->allReduceSum(
              values[rank].data(), values[rank].size(), kFloat))
        errors[rank] = llvm::toString(std::move(failure));
      else if (llvm::Error failure =
                   (*group)->allReduceSum(counts[rank].data(), 2, kInt64))
        errors[rank] = llvm::toString(std::move(failure));
      else if (llvm::Error failure = (*group)->barrier())
        errors[rank] = llvm::toString(std::move(failure));
    });
  for (std::thread &rank : ranks)
    rank.join();
  // Ranks r hold r + 1 (and 10 r at element 7), and count {r, 1}.
  float sum = float(size * (size + 1) / 2),
        tens = float(10 * size * (size - 1) / 2);
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_EQ(errors[rank], "") << "rank " << rank;
    EXPECT_EQ(values[rank][0], sum);
    EXPECT_EQ(values[rank][7], tens);
    EXPECT_EQ(values[rank].back(), sum);
    EXPECT_EQ(counts[rank],
              (std::vector<int64_t>{size * (size - 1) / 2, size}));
  }
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(Ranks, ProcessGroupSizes, testing::Values(2, 3, 4));

TEST(ProcessGroupTest, ALostRankIsNamedWithinTheTimeout) {
  std::string dir = scratchDirectory();
  std::vector<std::string> errors(3);
  std::vector<double> seconds(3);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 3; ++rank)
    ranks.emplace_back([&, rank] {
      auto group = ProcessGroup::connect(optionsFor(rank, dir, 3));
      if (!group) {
        errors[rank] = llvm::toString(group.takeError());
        return;
      }
      if (llvm::Error failure = (*group)->barrier()) {
        errors[rank] = llvm::toString(std::move(failure));
        return;
      }
      // worker:1 leaves: its connections close with its group.
      if (rank == 2)
        return;
      auto start = std::chrono::steady_clock::now();
      float value = 1;
      if (llvm::Error failure = (*group)->allReduceSum(&value, 1, kFloat))
        errors[rank] = llvm::toString(std::move(failure));
      seconds[rank] = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    });
  for (std::thread &rank : ranks)
    rank.join();
  EXPECT_EQ(errors[2], "");
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(errors[rank].find("the cross-replica sum across the 3 trainers "
                                "failed"),
              std::string::npos)
        << errors[rank];
    EXPECT_LT(seconds[rank], 10.0);
  }
  // Whoever saw the closed connection names the task it was.
  EXPECT_TRUE(errors[0].find("lost task worker:1") != std::string::npos ||
              errors[1].find("lost task worker:1") != std::string::npos)
      << errors[0] << "\n"
      << errors[1];
  llvm::sys::fs::remove_directories(dir);
}

TEST(ProcessGroupTest, NoPeerWithinTheTimeout) {
  std::string dir = scratchDirectory();
  ProcessGroupOptions options = optionsFor(0, dir, 1);
  options.taskNames = {"chief:0", "worker:0"};
  auto group = ProcessGroup::connect(options);
  ASSERT_FALSE(bool(group));
  std::string message = llvm::toString(group.takeError());
  EXPECT_NE(message.find("process group: task chief:0 could not connect to "
                         "worker:0 within 1 s"),
            std::string::npos)
      << message;
  llvm::sys::fs::remove_directories(dir);
}

} // namespace

TEST(ProcessGroupTest, MessagesKeepTheirOrderAndSize) {
  std::string dir = scratchDirectory();
  std::vector<std::string> errors(2);
  std::vector<std::vector<char>> received;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      ProcessGroupOptions options = optionsFor(rank, dir, 20, 2);
      // The server side waits as long as it takes for its client.
      if (rank == 1)
        options.connectTimeoutSeconds = 1e9;
      auto group = ProcessGroup::connect(options);
      if (!group) {
        errors[rank] = llvm::toString(group.takeError());
        return;
      }
      if (rank == 0) {
        // An empty message, a small one, and one of 3 MB.
        std::vector<char> big(3 << 20);
        for (size_t i = 0; i < big.size(); ++i)
          big[i] = char(i * 7);
        for (const std::vector<char> &message :
             {std::vector<char>(), std::vector<char>{'a', 'b'}, big})
          if (llvm::Error failure = (*group)->send(1, message, "a message"))
            errors[rank] = llvm::toString(std::move(failure));
        auto reply = (*group)->receive(1, "the reply");
        if (!reply)
          errors[rank] = llvm::toString(reply.takeError());
        else
          EXPECT_EQ(*reply, std::vector<char>{'!'});
        return;
      }
      for (int n = 0; n < 3; ++n) {
        auto message = (*group)->receive(0, "a message");
        if (!message) {
          errors[rank] = llvm::toString(message.takeError());
          return;
        }
        received.push_back(std::move(*message));
      }
      if (llvm::Error failure = (*group)->send(0, {'!'}, "the reply"))
        errors[rank] = llvm::toString(std::move(failure));
    });
  for (std::thread &rank : ranks)
    rank.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  ASSERT_EQ(received.size(), 3u);
  EXPECT_TRUE(received[0].empty());
  EXPECT_EQ(received[1], (std::vector<char>{'a', 'b'}));
  ASSERT_EQ(received[2].size(), size_t(3 << 20));
  EXPECT_EQ(received[2][12345], char(12345 * 7));
  llvm::sys::fs::remove_directories(dir);
}

TEST(ProcessGroupTest, AReceiveFromALostPeerNamesIt) {
  std::string dir = scratchDirectory();
  std::string error;
  double seconds = 0;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      auto group = ProcessGroup::connect(optionsFor(rank, dir, 20, 2));
      if (!group || rank == 1) {
        // worker:0 leaves at once: its connection closes with its group.
        if (!group)
          error = llvm::toString(group.takeError());
        return;
      }
      auto start = std::chrono::steady_clock::now();
      auto message = (*group)->receive(1, "a request");
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count();
      ASSERT_FALSE(bool(message));
      error = llvm::toString(message.takeError());
    });
  for (std::thread &rank : ranks)
    rank.join();
  EXPECT_NE(error.find("a request from worker:0 failed: lost task worker:0"),
            std::string::npos)
      << error;
  // Not the 20 s timeout: the closed connection is seen at once.
  EXPECT_LT(seconds, 10.0);
  llvm::sys::fs::remove_directories(dir);
}

TEST(ProcessGroupTest, OnlyTheLastTwoAttemptsStay) {
  std::string dir = scratchDirectory();
  // Four meetings in one directory, as four restarts of two trainers.
  for (int meeting = 0; meeting < 4; ++meeting) {
    std::vector<std::string> errors(2);
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < 2; ++rank)
      ranks.emplace_back([&, rank] {
        auto group = ProcessGroup::connect(optionsFor(rank, dir, 20, 2));
        if (!group)
          errors[rank] = llvm::toString(group.takeError());
      });
    for (std::thread &rank : ranks)
      rank.join();
    ASSERT_EQ(errors[0], "");
    ASSERT_EQ(errors[1], "");
  }
  auto exists = [&](const char *attempt) {
    return llvm::sys::fs::exists(dir + "/" + attempt);
  };
  EXPECT_FALSE(exists("1"));
  EXPECT_FALSE(exists("2"));
  EXPECT_TRUE(exists("3"));
  EXPECT_TRUE(exists("4"));
  llvm::sys::fs::remove_directories(dir);
}
